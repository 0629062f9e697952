# A route is imported by "<network_id>/<route_id>".
terraform import example_route.node_1_pods net-0123456789abcdef/rt-0123456789abcdef
