data "example_instance" "by_name" {
  name   = "node-1"
  region = "ex-west-1"
}

data "example_instance" "by_id" {
  id = "i-0123456789abcdef"
}

output "node_1_private_ip" {
  value = data.example_instance.by_name.private_ipv4
}
