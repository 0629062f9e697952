variable "certificates" {
  description = "Certificates to upload, by a key the load balancer's listeners name them with (the loadbalancer module's listeners[*].certificates): certificate_pem is the leaf, then its intermediates; private_key_version is any number, changed whenever the key changes. A change of either replaces the certificate: the new one is uploaded and the load balancers using it are updated in place before the old one is deleted."
  type = map(object({
    certificate_pem     = string
    private_key_version = optional(number, 1)
  }))
  nullable = false

  validation {
    condition     = length(var.certificates) <= 25
    error_message = "At most 25 certificates (what one https listener can serve); got ${length(var.certificates)}."
  }

  validation {
    condition     = alltrue([for k, c in var.certificates : c.certificate_pem != null && c.private_key_version != null && c.private_key_version >= 0])
    error_message = "Every certificate needs a certificate_pem and a private_key_version of at least 0."
  }
}

variable "private_keys" {
  description = "The certificates' private keys (unencrypted PEM), by the same keys as certificates. Ephemeral and sensitive: Terraform hands them to the provider's write-only private_key_wo and keeps them in no saved plan and no state, so they must come from an ephemeral source (the provider's example_private_keys, an ephemeral variable) that gives them again when a saved plan is applied."
  type        = map(string)
  sensitive   = true
  ephemeral   = true
  nullable    = false

  # Refers to var.certificates: Terraform 1.9. The message names the keys
  # of var.certificates only, never a value of this one.
  validation {
    condition     = alltrue([for k in keys(var.certificates) : contains(keys(var.private_keys), k)])
    error_message = "private_keys needs a key for every certificate: ${join(", ", sort(keys(var.certificates)))}."
  }
}

variable "region" {
  description = "Region of the certificates (that of the load balancers using them); null uses the provider's region."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags of every certificate (at most 50). Changing them replaces the certificates."
  type        = map(string)
  default     = {}
  nullable    = false
}
