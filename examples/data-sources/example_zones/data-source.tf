data "example_zones" "west" {
  region = "ex-west-1"
}

output "zones" {
  value = data.example_zones.west.names
}
