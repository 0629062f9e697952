data "example_network" "default" {
  name = "default"
}

data "example_instance" "node" {
  name = "node-1"
}

# Pod CIDR of node-1.
resource "example_route" "node_1_pods" {
  network_id         = data.example_network.default.id
  destination_cidr   = "10.244.1.0/24"
  target_instance_id = data.example_instance.node.id
}
