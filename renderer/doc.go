// Package renderer turns the controller's objects into Terraform root
// modules: a Service's own load balancer (ServiceLoadBalancer, from its
// description by package servicemodel; LoadBalancer translates and
// renders, for callers without an engine), a load balancer group of
// Services sharing one load balancer (GroupLoadBalancer, with a
// GroupReport of what became of each member), the cluster's routes
// (Routes) and its target pools (TargetPools), a Gateway's load balancer
// (RenderGateway) and a reserved address (AddressRoot). The load
// balancers, the address, the routes and the pools come as package
// lbmodel's descriptions, each checked with its Validate before it is
// rendered (a group is lbmodel's too: its Services, each translated by
// servicemodel).
//
// Rendering is pure: it does no I/O and reads no clock, so identical
// inputs render byte-identical files whatever the order of nodes, ports,
// routes or members, and a Module's Hash tells whether there is anything
// to plan again. A Module is one file, main.tf: a header; the terraform
// block (the required version, the Example provider pinned exactly, the
// state backend when one is configured); the provider block; the module
// calls (the modules shipped in package modules, or configured sources),
// for a Service with its certificates' module when it names TLS Secrets
// and an import block when it adopts a load balancer; and the outputs.
// It is written with hclwrite: every input is a cty literal, laid out one
// element per line (tokens.go), so a reviewer's diff shows exactly what
// changed and no input can inject HCL; the only references are the
// renderer's own (the certificates' ids, the ephemeral private keys).
//
// Secrets are never rendered: the provider reads the API token from its
// environment, a backend block may hold only the attributes allowed for
// its type (credentials go in the environment), and the private keys of
// TLS Secrets reach the provider through an ephemeral resource
// (TLSKeysEnv), never a file, a saved plan or the state.
//
// Invalid input is an error naming the field (lbmodel.InputError,
// TooManyListenersError, UnsupportedProtocolError, annotations.Error);
// servicemodel.Check checks a Service before anything is rendered. Inputs
// skipped or adjusted (a node without a usable providerID, a source range
// with host bits set, masked: the description's Warnings) are the
// Module's Warnings.
package renderer
