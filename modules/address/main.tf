# One reserved address. Its only input that moves is load_balancer_id: a
# move between load balancers is one in-place update of this resource,
# and nothing a load balancer's own configuration does (replace, destroy)
# releases the IP: the cloud detaches the address and keeps it.
resource "example_address" "this" {
  name             = var.name
  region           = var.region
  family           = var.family
  load_balancer_id = var.load_balancer_id
  tags             = var.tags
}
