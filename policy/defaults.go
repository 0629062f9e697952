package policy

// Defaults are the rules in force when the cloud config sets none
// (review.policy.rules unset; an empty list means no rules): a person
// approves every plan that replaces, destroys, forgets or imports a load
// balancer, whatever the apply policy. These are the changes that lose,
// give away or take over a public address.
var Defaults = []Rule{
	{
		Name:    "load-balancer-replace",
		When:    `plan.resources.exists(r, r.type == "example_load_balancer" && r.action == "replace")`,
		Effect:  RequireApproval,
		Message: "the plan replaces a load balancer: it gets new addresses",
	},
	{
		Name:    "load-balancer-destroy",
		When:    `plan.resources.exists(r, r.type == "example_load_balancer" && r.action == "delete")`,
		Effect:  RequireApproval,
		Message: "the plan destroys a load balancer: its addresses are released",
	},
	{
		Name:    "load-balancer-forget",
		When:    `plan.resources.exists(r, r.type in ["example_load_balancer", "example_address"] && r.action == "remove")`,
		Effect:  RequireApproval,
		Message: "the plan hands a load balancer (or its reserved address) over: the controller forgets it, the cloud keeps it",
	},
	{
		Name:    "load-balancer-import",
		When:    `plan.resources.exists(r, r.type == "example_load_balancer" && r.importing)`,
		Effect:  RequireApproval,
		Message: "the plan imports (adopts) an existing load balancer",
	},
}
