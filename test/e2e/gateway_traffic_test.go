package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/podtargets"
)

// A Gateway's routes carry traffic: requests to its address by host name
// reach the backends its HTTPRoute's rules name, by path and by weight,
// with the rule's header changes; a host no route has gets 404. The
// backends are ClusterIP Services: the load balancer reaches their pods
// directly, through their pod pools (ADR 24).
func TestGatewayTraffic(t *testing.T) {
	t.Parallel()
	e, admin := gatewayEnv(t, options{traffic: true})
	ctx := testkit.Context(t)
	for _, name := range []string{"a", "b"} {
		e.echoDeployment(t, "default", name, 1)
		_, err := e.kube.CoreV1().Services("default").Create(ctx, &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.ServiceSpec{Selector: map[string]string{"app": name},
				Ports: []v1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}}, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	exampleGatewayClass(t, admin)
	_, err := admin.GatewayV1().Gateways("default").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	set := &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-Route", Value: "shop"}}}
	_, err = admin.GatewayV1().HTTPRoutes("default").Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{"shop.example.test"},
			Rules: []gatewayv1.HTTPRouteRule{
				{Matches: []gatewayv1.HTTPRouteMatch{pathPrefix("/api")}, BackendRefs: []gatewayv1.HTTPBackendRef{backend("", "a", 1)}},
				{Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchRegularExpression), Value: ptr.To("/items/[0-9]+")}}},
					BackendRefs: []gatewayv1.HTTPBackendRef{backend("", "a", 1)}},
				{Matches: []gatewayv1.HTTPRouteMatch{pathPrefix("/")}, BackendRefs: []gatewayv1.HTTPBackendRef{backend("", "a", 1), backend("", "b", 3)},
					Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: set}}},
			},
		}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	var ip string
	testkit.Eventually(t, 90*time.Second, "the Gateway programmed", func() error {
		gw, err := admin.GatewayV1().Gateways("default").Get(ctx, "gw", metav1.GetOptions{})
		if err != nil || !meta.IsStatusConditionTrue(gw.Status.Conditions, "Programmed") || len(gw.Status.Addresses) == 0 ||
			len(gw.Status.Listeners) != 1 || gw.Status.Listeners[0].AttachedRoutes != 1 {
			r, _ := admin.GatewayV1().HTTPRoutes("default").Get(ctx, "shop", metav1.GetOptions{})
			return fmt.Errorf("%+v, %v; route %+v", gw.Status, err, r.Status)
		}
		ip = gw.Status.Addresses[0].Value
		return nil
	})
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(host, path string) (int, string, http.Header) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ip+path, nil)
		testkit.Must(t, err)
		req.Host = host
		res, err := c.Do(req)
		if err != nil {
			return 0, err.Error(), nil
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return res.StatusCode, "", nil
		}
		a, err := decodeAnswer(res)
		testkit.Must(t, err)
		return res.StatusCode, a.Pod, a.Headers
	}
	// Both backends answer (four requests at 1:3 reach each) before the
	// count starts with a fresh round.
	testkit.Eventually(t, time.Minute, "both backends answer", func() error {
		if code, pod, _ := get("shop.example.test", "/api/v1"); code != http.StatusOK || !strings.HasPrefix(pod, "a-") {
			return fmt.Errorf("GET /api/v1: %d from %q", code, pod)
		}
		seen := map[string]bool{}
		for range 4 {
			code, pod, _ := get("shop.example.test", "/web")
			if code != http.StatusOK {
				return fmt.Errorf("GET /web: %d %s", code, pod)
			}
			seen[strings.SplitN(pod, "-", 2)[0]] = true
		}
		if !seen["a"] || !seen["b"] {
			return fmt.Errorf("GET /web reached only %v", seen)
		}
		return nil
	})
	deployments := map[string]int{}
	for range 100 {
		code, pod, headers := get("shop.example.test", "/web")
		if code != http.StatusOK || headers.Get("X-Route") != "shop" {
			t.Fatalf("GET /web: %d from %q, headers %v", code, pod, headers)
		}
		deployments[strings.SplitN(pod, "-", 2)[0]]++
	}
	// Smooth weighted round robin deals 1:3 exactly in every four; a
	// request that failed while the backends came up may have moved the
	// round by a step or two.
	if a := deployments["a"]; a < 23 || a > 27 || deployments["b"] != 100-a {
		t.Fatalf("100 requests at 1:3: %v", deployments)
	}
	for range 10 {
		if code, pod, _ := get("shop.example.test", "/api"); code != http.StatusOK || !strings.HasPrefix(pod, "a-") {
			t.Fatalf("GET /api: %d from %q", code, pod)
		}
	}
	if code, _, _ := get("other.example.test", "/api"); code != http.StatusNotFound {
		t.Fatalf("a host no route has: %d", code)
	}
	// A regular expression path takes the whole paths it matches (a
	// only); a longer one falls through to / (b three times in four).
	for range 4 {
		if code, pod, _ := get("shop.example.test", "/items/42"); code != http.StatusOK || !strings.HasPrefix(pod, "a-") {
			t.Fatalf("GET /items/42: %d from %q, want a", code, pod)
		}
	}
	fellThrough := false
	for range 4 {
		_, pod, _ := get("shop.example.test", "/items/42/reviews")
		fellThrough = fellThrough || strings.HasPrefix(pod, "b-")
	}
	if !fellThrough {
		t.Fatal("GET /items/42/reviews never reached b: the regex took a path it does not match whole")
	}

	// A hand-written EndpointSlice in default naming another namespace's
	// pod: told once on the Service, never a target in the cloud, and no
	// request reaches that pod.
	_, err = e.kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	e.echoDeployment(t, "other", "theirs", 1)
	pods, err := e.kube.CoreV1().Pods("other").List(ctx, metav1.ListOptions{LabelSelector: "app=theirs"})
	testkit.Must(t, err)
	theirs := pods.Items[0].Status.PodIP
	_, err = e.kube.CoreV1().Services("default").Create(ctx, &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "handmade"},
		Spec: v1.ServiceSpec{Ports: []v1.ServicePort{{Name: "http", Port: 80}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = e.kube.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "handmade-1", Labels: map[string]string{discoveryv1.LabelServiceName: "handmade"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](3000)}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{theirs}}},
	}, metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = admin.GatewayV1().HTTPRoutes("default").Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "handmade"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{"handmade.example.test"},
			Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{backend("", "handmade", 1)}}},
		}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	var refused string
	// Told once refused for 30 s (podpools RefusedGrace).
	testkit.Eventually(t, 2*time.Minute, "a PodTargetRefused event on Service default/handmade", func() error {
		evs, err := e.kube.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=handmade,reason=PodTargetRefused"})
		if err != nil || len(evs.Items) == 0 {
			return fmt.Errorf("none yet (%v)", err)
		}
		refused = evs.Items[0].Message
		return nil
	})
	if !strings.Contains(refused, theirs) || strings.Contains(refused, "other") {
		t.Errorf("event %q: want the address named, and not whose it is", refused)
	}
	testkit.Eventually(t, time.Minute, "the route served", func() error {
		if code, _, _ := get("handmade.example.test", "/"); code != http.StatusServiceUnavailable {
			return fmt.Errorf("status %d, want 503 (no target)", code)
		}
		return nil
	})
	pools, err := e.api.ListTargetPools(ctx, exampleapi.TargetPoolFilter{})
	testkit.Must(t, err)
	for _, p := range pools {
		if slices.ContainsFunc(p.Targets, func(target string) bool { return strings.HasPrefix(target, theirs+":") }) {
			t.Errorf("pool %s (%s) targets the other namespace's pod %s: %v", p.ID, p.Tags["k8s.example.com/service-name"], theirs, p.Targets)
		}
	}

	remadeRoute(ctx, t, e, admin, get)
}

// remadeRoute: route shop deleted and made again within a minute
// (podpools UnusedGrace) finds its backends' pools, not destroyed and
// made again; a's pod, replaced while nothing forwarded to its pool, is
// the one the route made again reaches, never the pod that left.
func remadeRoute(ctx context.Context, t *testing.T, e *env, admin gwclient.Interface, get func(host, path string) (int, string, http.Header)) {
	poolOf := func(svc string) exampleapi.TargetPool {
		t.Helper()
		pools, err := e.api.ListTargetPools(ctx, exampleapi.TargetPoolFilter{})
		testkit.Must(t, err)
		var of []exampleapi.TargetPool
		for _, p := range pools {
			if p.Tags[lbmodel.TagServiceNamespace] == "default" && p.Tags[lbmodel.TagServiceName] == svc {
				of = append(of, p)
			}
		}
		if len(of) != 1 {
			t.Fatalf("pools of Service default/%s: %+v, want one", svc, of)
		}
		return of[0]
	}
	before := poolOf("a")
	shop, err := admin.GatewayV1().HTTPRoutes("default").Get(ctx, "shop", metav1.GetOptions{})
	testkit.Must(t, err)
	testkit.Must(t, admin.GatewayV1().HTTPRoutes("default").Delete(ctx, "shop", metav1.DeleteOptions{}))
	testkit.Eventually(t, time.Minute, "the route gone", func() error {
		if code, _, _ := get("shop.example.test", "/api"); code != http.StatusNotFound {
			return fmt.Errorf("status %d, want 404", code)
		}
		return nil
	})
	pods, err := e.kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=a"})
	testkit.Must(t, err)
	if len(pods.Items) != 1 {
		t.Fatalf("%d pods of a, want 1", len(pods.Items))
	}
	left := pods.Items[0]
	testkit.Must(t, e.kube.CoreV1().Pods("default").Delete(ctx, left.Name, metav1.DeleteOptions{}))
	var pod v1.Pod
	testkit.Eventually(t, time.Minute, "a's pod replaced and ready", func() error {
		pods, err := e.kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=a"})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.Name != left.Name && p.Status.PodIP != "" && p.Status.PodIP != left.Status.PodIP && podReady(&p) {
				pod = p
				return nil
			}
		}
		return fmt.Errorf("pods %d", len(pods.Items))
	})
	_, err = admin.GatewayV1().HTTPRoutes("default").Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "shop"}, Spec: shop.Spec},
		metav1.CreateOptions{})
	testkit.Must(t, err)
	testkit.Eventually(t, 2*time.Minute, "the route made again answering from a's new pod", func() error {
		if code, from, _ := get("shop.example.test", "/api"); code != http.StatusOK || from != pod.Name {
			return fmt.Errorf("GET /api: %d from %q, want %s", code, from, pod.Name)
		}
		return nil
	})
	for range 10 {
		if code, from, _ := get("shop.example.test", "/api"); code != http.StatusOK || from != pod.Name {
			t.Fatalf("GET /api: %d from %q, want a's new pod %s", code, from, pod.Name)
		}
	}
	after := poolOf("a")
	if after.ID != before.ID {
		t.Errorf("a's pool %s, was %s: destroyed and made again within the minute", after.ID, before.ID)
	}
	if want := []string{pod.Status.PodIP + ":3000"}; !slices.Equal(after.Targets, want) {
		t.Errorf("a's pool targets %v, want %v", after.Targets, want)
	}
}

// webGateway creates Service default/web (its pods' port "http" as 80)
// and Gateway default/gw of class example, one HTTP listener on 80.
func webGateway(ctx context.Context, t testing.TB, e *env, admin gwclient.Interface) {
	t.Helper()
	_, err := e.kube.CoreV1().Services("default").Create(ctx, &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []v1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}},
		metav1.CreateOptions{})
	testkit.Must(t, err)
	httpGateway(ctx, t, admin)
}

// httpGateway creates Gateway default/gw of class example, one HTTP
// listener on 80.
func httpGateway(ctx context.Context, t testing.TB, admin gwclient.Interface) {
	t.Helper()
	exampleGatewayClass(t, admin)
	_, err := admin.GatewayV1().Gateways("default").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
}

// A rolling update of 10 pods behind a Gateway, under 50 requests/s,
// fails no request: each new pod is a target before it is Ready, Ready
// only once the load balancer finds it healthy (its readiness gate), and
// each old one leaves the pool while it still serves (terminating, it
// keeps serving until kwok deletes it, 15 s on).
func TestGatewayRollout(t *testing.T) {
	t.Parallel()
	e, admin := gatewayEnv(t, options{traffic: true})
	ctx := testkit.Context(t)
	webGateway(ctx, t, e, admin)
	_, err := admin.GatewayV1().HTTPRoutes("default").Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{backend("", "web", 1)}}},
		}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	gatedDeployment(t, e)
	ip := ""
	testkit.Eventually(t, time.Minute, "the Gateway's address", func() error {
		gw, err := admin.GatewayV1().Gateways("default").Get(ctx, "gw", metav1.GetOptions{})
		if err != nil || len(gw.Status.Addresses) == 0 {
			return fmt.Errorf("none yet (%v)", err)
		}
		ip = gw.Status.Addresses[0].Value
		return nil
	})
	rollUnderLoad(t, e, "http://"+ip+"/")
}

// A rolling update of 10 pods behind a Service of target type ip, under
// 50 requests/s, fails no request: TestGatewayRollout's, through the
// Service's own load balancer.
func TestServiceRollout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{traffic: true})
	e.startCCM()
	e.nodeA()
	_, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web",
		Annotations: map[string]string{string(annotations.LBTargetType): annotations.TargetTypeIP}},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "web"},
			Ports: []v1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	gatedDeployment(t, e)
	rollUnderLoad(t, e, "http://"+e.ingressIP(t, "default", "web")+"/")
}

// gatedDeployment runs Deployment default/web: 10 echo pods, each with
// the readiness gate of Service web, serving on for 15 s once
// terminating (kwok deletes it then): the time its load balancers take to
// let it go.
func gatedDeployment(t *testing.T, e *env) {
	t.Helper()
	e.echoDeploymentOf(t, "default", "web", 10, func(tpl *v1.PodTemplateSpec) {
		tpl.Annotations = map[string]string{"pod-delete.stage.kwok.x-k8s.io/delay": "15s"}
		tpl.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: podtargets.Gate("web")}}
	})
}

// rollUnderLoad rolls Deployment default/web (gatedDeployment) while 50
// requests/s go to url, and fails on any failed request, or a pod Ready
// without its gate.
func rollUnderLoad(t *testing.T, e *env, url string) {
	t.Helper()
	ctx := testkit.Context(t)
	gate := podtargets.Gate("web")
	d, err := e.kube.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	testkit.Must(t, err)
	plain := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	testkit.Eventually(t, time.Minute, "an answer at "+url, func() error { _, err := ask(plain, url); return err })

	stop := load(url, 50)
	// The new pods: another ReplicaSet, three at a time, none of the old
	// ones going before new ones are Ready.
	maxUnavailable, maxSurge := intstr.FromInt32(0), intstr.FromInt32(3)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &maxUnavailable, MaxSurge: &maxSurge}}
	d.Spec.Template.Spec.Containers[0].Env = append(d.Spec.Template.Spec.Containers[0].Env, v1.EnvVar{Name: "VERSION", Value: "2"})
	began := time.Now()
	_, err = e.kube.AppsV1().Deployments("default").Update(ctx, d, metav1.UpdateOptions{})
	testkit.Must(t, err)
	testkit.Eventually(t, 3*time.Minute, "the rollout", func() error {
		cur, err := e.kube.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s := cur.Status; s.ObservedGeneration < cur.Generation || s.UpdatedReplicas != 10 || s.ReadyReplicas != 10 || s.Replicas != 10 {
			return fmt.Errorf("%+v", s)
		}
		return nil
	})
	rolled := time.Since(began)
	time.Sleep(2 * time.Second)
	answered, failed := stop()
	t.Logf("rollout of 10 pods in %s under 50 requests/s: %d answered, %d failed", rolled.Round(time.Second), answered, len(failed))
	if len(failed) > 0 {
		t.Fatalf("%d requests failed during the rollout, first: %v", len(failed), failed[0])
	}
	// Every pod Ready now passed its gate, and answers.
	pods, err := e.kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	testkit.Must(t, err)
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && !slices.ContainsFunc(p.Status.Conditions, func(c v1.PodCondition) bool { return c.Type == gate && c.Status == v1.ConditionTrue }) {
			t.Errorf("pod %s is Ready without its gate: %+v", p.Name, p.Status.Conditions)
		}
	}
}
