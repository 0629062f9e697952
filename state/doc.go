// Package state configures where each object's Terraform state lives: one
// state per object (a Service, a load balancer group, the route set, the
// target pools), in the backend the platform team chose (local,
// kubernetes, pg, s3, http).
//
// Credentials never reach rendered files, .terraform/ or plan files: the
// backend block holds only non-secret settings and the secrets travel as
// environment variables of the terraform process (PG_CONN_STR,
// TF_HTTP_PASSWORD, AWS_*, KUBE_CONFIG_PATH).
package state
