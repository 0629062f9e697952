# A load balancer is imported by its id.
terraform import example_load_balancer.web lb-0123456789abcdef
