// Package runner applies rendered Terraform root modules with
// terraform-exec, one workspace directory per object (a Service, a load
// balancer group, the route set, the target pools).
//
// The workflow is split by concern, as in flux-iac/tofu-controller:
// runner.go holds the configuration and the slots bounding concurrent
// work, which fairshare.go hands out fairly between namespaces (Job.Share);
// binary.go finds terraform, handle.go asks its version once
// per runner; workspace.go prepares a directory and decides whether init
// is needed; owner.go refuses a workspace applied for another object or
// an object destroyed; plan.go plans into a saved plan file, summarises
// it from Terraform's machine-readable output (ui.go) and identifies it;
// apply.go applies exactly that plan (Ensure: plan, review, apply);
// destroy.go removes an object and its state; lock.go recognises and
// clears stale state locks; move.go moves a state off its legacy
// workspace; recover.go pushes a state an
// interrupted apply could not write, and imports; lastapply.go remembers
// the last successful apply so an unchanged object costs no terraform
// process; provider.go serves the Example provider in-process for
// terraform to attach to; initcopy.go gives a new workspace a copy of
// another's init; speculate.go plans without saving, for previews;
// encryption.go builds OpenTofu's state and plan encryption and
// encryptionenv.go hands it to each process (TF_ENCRYPTION); sizes.go
// counts what the runner keeps in memory; errors.go holds the errors,
// secrets scrubbed.
//
// A terraform process costs ~0.1 s of CPU before doing anything, so the
// runner starts as few as it can: `show -json` only to identify a plan
// with changes or for policy rules that read planned values (the plan's
// JSON stream carries the summary), `output` only for an object with no
// remembered apply (the apply's JSON stream carries the outputs), no
// `init` unless providers, modules or backend changed, and none for a
// new workspace like one initialised before; and terraform starts no
// provider process (attached mode).
package runner
