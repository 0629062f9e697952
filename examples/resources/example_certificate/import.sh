# A certificate is imported by its id (or with an import block). The key
# cannot be read back: the configuration must still set private_key_wo
# (checked against the certificate at plan time), and the first apply only
# records private_key_wo_version.
terraform import example_certificate.shop cert-0123456789abcdef
