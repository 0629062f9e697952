package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/termsafe"
)

// objectOptions select the object of plan, history, approve and unlock.
type objectOptions struct {
	kubeOptions
	// serviceNamespace is -n: the Service's namespace.
	serviceNamespace string
}

func (o *objectOptions) addFlags(cmd *cobra.Command) {
	o.kubeOptions.addFlags(cmd)
	cmd.Flags().StringVarP(&o.serviceNamespace, "service-namespace", "n", "", "the Service's namespace (default: the kubeconfig context's); ns/name works too")
}

// objectCmd completes cmd, a command on one object (plan, history,
// approve, unlock): its connection and -n flags, and a RunE that connects,
// resolves the object its first argument names and hands it to run with
// the other arguments.
func objectCmd(cmd *cobra.Command, run func(cmd *cobra.Command, c *cluster, ref objectref.Ref, args []string) error) *cobra.Command {
	var o objectOptions
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, ref, err := o.object(args[0])
		if err != nil {
			return err
		}
		return run(cmd, c, ref, args[1:])
	}
	o.addFlags(cmd)
	return cmd
}

// object connects and resolves the command's object argument.
func (o *objectOptions) object(arg string) (*cluster, objectref.Ref, error) {
	c, err := o.connect()
	if err != nil {
		return nil, objectref.Ref{}, err
	}
	ref, err := objectref.Parse(arg, o.serviceNamespace, c.defaultNamespace)
	return c, ref, err
}

// membersCell lists a group's members, "-" for none (or not a group).
func membersCell(refs []objectref.Ref) string {
	if len(refs) == 0 {
		return "-"
	}
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = termsafe.Line(r.Arg())
	}
	return strings.Join(out, ", ")
}

// recorded is an object with its record.
type recorded struct {
	ref objectref.Ref
	// service is the live Service (nil for other kinds, or if it is gone).
	service *corev1.Service
	record  *records.Record
}

// errNoRecord: the object exists (or may), but the controller has not
// recorded a plan for it.
var errNoRecord = errors.New("no plan record")

// resolve finds ref's record. For a Service it also reads the Service:
// needService makes its absence an error (approve and unlock name it by
// its uid).
func (c *cluster) resolve(ctx context.Context, ref objectref.Ref, needService bool) (*recorded, error) {
	t := &recorded{ref: ref}
	// exists: the Service is there (or may be: reading it failed, which
	// only approve and unlock need).
	exists := true
	if ref.Kind == objectref.KindService {
		svc, err := c.client.CoreV1().Services(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case err == nil:
			t.service = svc
		case apierrors.IsNotFound(err):
			if needService {
				return nil, fmt.Errorf("%s not found", ref.Describe())
			}
			exists = false
		case needService:
			return nil, c.explain(err, "get service "+ref.Namespace+"/"+ref.Name)
		}
	}
	all, err := c.records(ctx)
	if err != nil {
		return nil, err
	}
	var match []*records.Record
	for _, r := range all {
		if r.Object.Kind == ref.Kind && r.Object.Namespace == ref.Namespace && r.Object.Name == ref.Name {
			match = append(match, r)
		}
	}
	if len(match) == 0 {
		return nil, c.noRecord(ref, exists)
	}
	// Two records for one name: a Service deleted and created again before
	// the old record went. The live Service's wins, else the newest.
	slices.SortStableFunc(match, func(a, b *records.Record) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	best := match[0]
	if t.service != nil {
		if i := slices.IndexFunc(match, func(r *records.Record) bool { return r.Object.UID == string(t.service.UID) }); i >= 0 {
			best = match[i]
		}
	}
	// List may leave out the rendered files; Get has everything.
	rec, err := c.store.Get(ctx, best.Workspace)
	if err != nil {
		return nil, c.explain(err, "get plan record "+best.Workspace)
	}
	if rec == nil {
		return nil, c.noRecord(ref, exists)
	}
	t.record = rec
	return t, nil
}

// noRecordChecks are, by kind, what to check when an object has no plan
// record; each is asked with whether --namespace is the controller's.
var noRecordChecks = map[string]string{
	objectref.KindRouteSet:     "does the controller manage routes",
	objectref.KindTargetPools:  "are target pools enabled",
	objectref.KindServiceGroup: "does a Service name it in its loadbalancer.example.com/group annotation, has the controller planned it",
	objectref.KindGateway:      "is its GatewayClass's controllerName example.com/gateway-controller, is gatewayAPI.enabled in the cloud config",
	objectref.KindPodPool:      "does a Service of target type ip, or a Gateway with gatewayAPI.targetType ip, forward to that Service port",
	objectref.KindRuleSet:      "is the route attached to that Gateway, of this controller's class",
}

// noRecord says that ref has no plan record, and what to check; exists
// tells whether a Service ref names is in the cluster.
func (c *cluster) noRecord(ref objectref.Ref, exists bool) error {
	check, ok := noRecordChecks[ref.Kind]
	switch {
	case ref.Kind == objectref.KindAddress:
		check = "is it the cloud name of an address a Service of namespace " + ref.Namespace + " names or keeps"
	case !ok && !exists:
		return fmt.Errorf("%s not found, and no plan record for it in namespace %s", ref.Describe(), c.namespace)
	case !ok:
		return fmt.Errorf("%w for %s in namespace %s yet (is it type LoadBalancer, has the controller planned it, and is --namespace the controller's namespace?)",
			errNoRecord, ref.Describe(), c.namespace)
	}
	return fmt.Errorf("%w for %s in namespace %s (%s, and is --namespace the controller's namespace?)", errNoRecord, ref.Describe(), c.namespace, check)
}

// sortPlans returns rec's plans newest first, whatever order they were
// stored in (ties keep the stored order, newest first).
func sortPlans(rec *records.Record) []records.Plan {
	plans := slices.Clone(rec.Plans)
	slices.SortStableFunc(plans, func(a, b records.Plan) int { return b.PlannedAt.Compare(a.PlannedAt) })
	return plans
}

// latestPlan is rec's newest plan, nil when it has none.
func latestPlan(rec *records.Record) *records.Plan {
	if plans := sortPlans(rec); len(plans) > 0 {
		return &plans[0]
	}
	return nil
}

// records lists every plan record in the controller's namespace.
func (c *cluster) records(ctx context.Context) ([]*records.Record, error) {
	all, err := c.store.List(ctx)
	if err != nil {
		return nil, c.explain(err, "list plan records in namespace "+c.namespace)
	}
	return all, nil
}
