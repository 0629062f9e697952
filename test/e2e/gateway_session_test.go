package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/internal/gatewaycrds"
	"github.com/example/cloud-provider-example/internal/testkit"
)

// An HTTPRoute rule's sessionPersistence (the experimental channel's)
// keeps a client on one pod: requests without the cookie go round the
// Service's three pods, each answer setting it (of the rule's path,
// HttpOnly, showing no address); requests bringing one back all reach
// the pod that set it, and get no new one; a cookie changed by the client
// is no error: the request is served, and answered with a fresh cookie.
func TestGatewaySessionPersistence(t *testing.T) {
	t.Parallel()
	e, admin := gatewayEnv(t, options{traffic: true, crdChannel: gatewaycrds.Experimental})
	ctx := testkit.Context(t)
	e.echoDeployment(t, "default", "web", 3)
	webGateway(ctx, t, e, admin)
	_, err := admin.GatewayV1().HTTPRoutes("default").Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "cart"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Rules: []gatewayv1.HTTPRouteRule{{Matches: []gatewayv1.HTTPRouteMatch{pathPrefix("/cart")},
				BackendRefs:        []gatewayv1.HTTPBackendRef{backend("", "web", 1)},
				SessionPersistence: &gatewayv1.SessionPersistence{SessionName: ptr.To("cart-session")}}},
		}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	var ip string
	testkit.Eventually(t, 90*time.Second, "the Gateway programmed, the route accepted", func() error {
		gw, err := admin.GatewayV1().Gateways("default").Get(ctx, "gw", metav1.GetOptions{})
		if err != nil || !meta.IsStatusConditionTrue(gw.Status.Conditions, "Programmed") || len(gw.Status.Addresses) == 0 {
			return fmt.Errorf("%+v, %v", gw.Status, err)
		}
		r, err := admin.GatewayV1().HTTPRoutes("default").Get(ctx, "cart", metav1.GetOptions{})
		if err != nil || len(r.Status.Parents) != 1 || !meta.IsStatusConditionTrue(r.Status.Parents[0].Conditions, "Accepted") {
			return fmt.Errorf("route %+v, %v", r.Status, err)
		}
		if r.Spec.Rules[0].SessionPersistence == nil {
			t.Fatal("the API server dropped sessionPersistence: not the experimental channel's CRDs")
		}
		ip = gw.Status.Addresses[0].Value
		return nil
	})
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	// get is the pod that answers GET /cart/items with cookie (none: ""),
	// and the session cookie the answer sets.
	get := func(cookie string) (string, *http.Cookie, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ip+"/cart/items", nil)
		testkit.Must(t, err)
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		res, err := c.Do(req)
		if err != nil {
			return "", nil, err
		}
		defer res.Body.Close()
		a, err := decodeAnswer(res)
		if err != nil {
			return "", nil, err
		}
		for _, sc := range res.Cookies() {
			if sc.Name == "cart-session" {
				return a.Pod, sc, nil
			}
		}
		return a.Pod, nil, nil
	}
	// Without the cookie: the three pods in turn, each answer a cookie.
	first := map[string]*http.Cookie{} // by pod
	// Two minutes: the pool follows the pods with an apply of its own,
	// which a loaded machine (the e2e runs five tests at once) may slow.
	testkit.Eventually(t, 2*time.Minute, "the three pods answer, each setting a cookie", func() error {
		for range 3 {
			pod, sc, err := get("")
			switch {
			case err != nil:
				return err
			case sc == nil || sc.Path != "/cart" || !sc.HttpOnly || sc.SameSite != http.SameSiteLaxMode || sc.MaxAge != 0:
				return fmt.Errorf("%s answered with session cookie %v, want one of path /cart, HttpOnly, SameSite=Lax, no Max-Age", pod, sc)
			}
			first[pod] = sc
		}
		if len(first) != 3 {
			return fmt.Errorf("reached %d pods, want 3 (%s)", len(first), e.podsAndPools(t, "default", "app=web"))
		}
		return nil
	})
	pods, err := e.kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	testkit.Must(t, err)
	for _, p := range pods.Items {
		for _, sc := range first {
			if strings.Contains(sc.Value, p.Status.PodIP) || strings.Contains(sc.Value, p.Name) {
				t.Fatalf("cookie %q shows pod %s (%s)", sc.Value, p.Name, p.Status.PodIP)
			}
		}
	}
	// With a cookie: its pod, every time, and no new cookie.
	for pod, sc := range first {
		for range 10 {
			got, again, err := get(sc.Name + "=" + sc.Value)
			if err != nil || got != pod || again != nil {
				t.Fatalf("with %s's cookie: %s (new cookie %v, %v), want %s", pod, got, again, err, pod)
			}
		}
	}
	// Changed: served, with a fresh cookie.
	for _, sc := range first {
		v, k := []byte(sc.Value), len(sc.Value)/2
		v[k] = 'A' // a letter for another: still base64url, no longer signed
		if sc.Value[k] == 'A' {
			v[k] = 'B'
		}
		_, fresh, err := get(sc.Name + "=" + string(v))
		if err != nil || fresh == nil || fresh.Value == string(v) {
			t.Fatalf("a changed cookie: new cookie %v, %v; want the request served and a fresh cookie", fresh, err)
		}
	}
}
