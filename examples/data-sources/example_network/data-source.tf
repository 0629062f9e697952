data "example_network" "default" {
  name   = "default"
  region = "ex-west-1"
}

output "network_cidr" {
  value = data.example_network.default.cidr
}
