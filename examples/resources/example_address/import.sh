# An address is imported by its id, or by its IP (the one DNS records
# point at), with terraform import or an import block.
terraform import example_address.web addr-0123456789abcdef
terraform import example_address.web 203.0.113.7
