data "example_instances" "cluster" {
  region = "ex-west-1"
  tags = {
    cluster = "demo" # tag cluster=demo
    role    = ""     # any value of tag role
  }
}

output "cluster_instance_ids" {
  value = data.example_instances.cluster.ids
}

output "cluster_zones" {
  value = distinct([for i in data.example_instances.cluster.instances : i.zone])
}
