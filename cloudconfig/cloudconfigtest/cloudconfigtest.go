// Package cloudconfigtest holds the cloud config that tests of package
// cloudconfig and of the packages that load one start from. It imports
// nothing, so that cloudconfig's own tests can use it.
package cloudconfigtest

// Minimal is a complete cloud config with no more than is required;
// tests add to it.
const Minimal = `
clusterID: prod
region: ex-west-1
api: {endpoint: "http://127.0.0.1:8440", tokenFile: /etc/example/token}
metadata: {endpoint: "http://127.0.0.1:8441"}
terraform: {workDir: /var/lib/ccm, cliConfig: /opt/example/terraform.rc, lockFile: /opt/example/lock.hcl}
state: {type: local, local: {dir: /var/lib/ccm-state}}
`
