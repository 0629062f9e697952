package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
)

// A pod pool's plan held for approval (the target pools' manual policy)
// is never approved by whoever made its pods (docs/tenancy.md): dora may
// scale the Deployment and review, so her approval of the plan her
// scaling caused is ignored, with real identities; victor's counts, and
// only then is the new pod a target in the cloud.
func TestPodPoolApprovals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{workloads: true, targetPools: map[string]any{"applyPolicy": "manual"}})
	e.nodeA()
	ctx := testkit.Context(t)
	dora := e.newUser(t, "default", "dora")
	e.bindRole(t, "default", "scaler-dora", subject("default", "dora"),
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments", "deployments/scale"}, Verbs: []string{"get", "update", "patch"}})
	e.bindReviewer(t, "default", "dora")
	e.waitAllowed(t, dora, "create", reviewapi.Group, "planapprovals", namespace)
	e.waitAllowed(t, dora, "update", "apps", "deployments", "default")
	victor := e.reviewer(t, "victor")

	e.echoDeploymentOf(t, "default", "web", 1, nil)
	_, err := e.kube.CoreV1().Services("default").Create(ctx, &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web",
		Annotations: map[string]string{string(annotations.LBTargetType): annotations.TargetTypeIP}},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "web"},
			Ports: []v1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}, AllocateLoadBalancerNodePorts: ptr.To(false)}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	ref := objectref.PodPool("default", "web", 80, v1.ProtocolTCP)
	e.approveUntil(t, victor, ref, func() error { return e.podsTargeted(t, "web", 1) })
	e.ingressIP(t, "default", "web")

	// Dora scales to 2: the pool's plan that adds the pod waits, and her
	// approval of it is ignored.
	_, err = dora.kube.AppsV1().Deployments("default").UpdateScale(ctx, "web",
		&autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: autoscalingv1.ScaleSpec{Replicas: 2}}, metav1.UpdateOptions{})
	testkit.Must(t, err)
	e.deploymentReady(t, "default", "web", 2)
	ignored := fmt.Sprintf("%q may edit any Deployment of namespace default, whose editor cannot be verified", dora.name)
	e.approveUntil(t, dora, ref, func() error {
		for _, ev := range e.eventsIn("default", "web", "ApprovalIgnored") {
			if strings.Contains(ev.Message, ignored) {
				return nil
			}
		}
		return fmt.Errorf("no ApprovalIgnored event saying %s", ignored)
	})
	if got, err := e.podPoolTargets(t); err != nil || len(got["web"]) != 1 {
		t.Fatalf("after dora's approval, the pool targets %v (%v); want the first pod alone", got["web"], err)
	}
	id := e.approveUntil(t, victor, ref, func() error { return e.podsTargeted(t, "web", 2) })
	e.auditLine(t, "apply", id, victor.name)
}

// podsTargeted says whether Service default/name's pod pool in the cloud
// targets its n running pods (their http port), and no other.
func (e *env) podsTargeted(t *testing.T, name string, n int) error {
	pods, err := e.kube.CoreV1().Pods("default").List(testkit.Context(t), metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		return err
	}
	var want []string
	for _, p := range pods.Items {
		if p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			want = append(want, p.Status.PodIP+":3000") // the echo pods' http port
		}
	}
	slices.Sort(want)
	got, err := e.podPoolTargets(t)
	if err != nil || len(want) != n || !slices.Equal(got[name], want) {
		return fmt.Errorf("pool targets %v; running pods %v (%v)", got[name], want, err)
	}
	return nil
}
