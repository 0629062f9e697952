// Package runner applies rendered Terraform root modules with
// terraform-exec, one workspace directory per Kubernetes object.
//
// The workflow is split by concern, as in flux-iac/tofu-controller:
// binary.go finds terraform, workspace.go prepares a directory and decides
// whether init is needed, plan.go plans into a saved plan file and
// summarises it from Terraform's machine-readable output, apply.go applies
// exactly that plan, destroy.go removes an object and its state, lock.go
// recognises and clears stale state locks, lastapply.go remembers the last
// successful apply so an unchanged object costs no terraform process,
// provider.go serves the Example provider in-process for terraform to
// attach to, initcopy.go gives a new workspace a copy of another's init.
//
// A terraform process costs ~0.1 s of CPU before doing anything, so the
// runner starts as few as it can: no `show -json` (the plan's JSON stream
// carries the summary), no `output` (the apply's JSON stream carries the
// outputs), no `init` unless providers, modules or backend changed, and
// none for a new workspace like one initialised before; and terraform
// starts no provider process (attached mode).
package runner
