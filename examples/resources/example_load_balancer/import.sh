# A load balancer is imported by its id (or with an import block). With
# owner_tags set, the plan that follows fails if its tags name another owner.
terraform import example_load_balancer.web lb-0123456789abcdef
