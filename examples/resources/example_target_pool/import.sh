# A target pool is imported by its id (or with an import block). With
# owner_tags set, the plan that follows fails if its tags name another owner.
terraform import example_target_pool.workers tp-0123456789abcdef
