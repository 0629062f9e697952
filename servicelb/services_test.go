package servicelb

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/review/reviewtest"
)

// testConfig is a complete cloud config plus extra.
func testConfig(t *testing.T, extra string) *cloudconfig.Config { return reviewtest.Config(t, extra) }

func lbService(ports int, ann map[string]string) *v1.Service {
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1", Annotations: ann},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer}}
	for i := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, v1.ServicePort{Name: fmt.Sprint("p", i), Protocol: v1.ProtocolTCP, Port: int32(1000 + i), NodePort: int32(30000 + i)})
	}
	return svc
}

// drain returns the events recorded so far.
func drain(rec *record.FakeRecorder) string {
	var b strings.Builder
	for {
		select {
		case ev := <-rec.Events:
			b.WriteString(ev + "\n")
		default:
			return b.String()
		}
	}
}

// The engine's refusal (engine.CheckService: the listeners past
// loadBalancer.maxListeners, engine's TestCheckServiceUnderTheCloudConfig)
// is the Service's failure, told in an InvalidService event naming it;
// nothing is reconciled.
func TestOverLimitServiceIsRefusedWithAnEvent(t *testing.T) {
	lbs, eng, rec := lbsOverFakes(t, testConfig(t, ""))
	eng.check = &engine.TooManyListenersError{Ports: 11, Limit: 10}
	_, err := lbs.Ensure(t.Context(), lbService(11, nil), nil)
	events := drain(rec)
	if err == nil || !strings.Contains(events, "InvalidService") || !strings.Contains(events, "at most 10 listeners") {
		t.Fatalf("err %v, events:\n%s", err, events)
	}
	if n := eng.ran(); n != 0 {
		t.Fatalf("%d reconciles for a refused Service", n)
	}
}

func TestAdoptionRefusedByConfig(t *testing.T) {
	lbs, eng, rec := lbsOverFakes(t, testConfig(t, "loadBalancer: {adoption: {enabled: true, namespaces: [platform]}}\n"))
	svc := lbService(1, map[string]string{string(annotations.LBAdoptID): "lb-0123456789abcdef", string(annotations.LBName): "old"})
	_, err := lbs.Ensure(t.Context(), svc, nil)
	events := drain(rec)
	if err == nil || !strings.Contains(events, "ReferenceRefused") || !strings.Contains(events, string(annotations.LBAdoptID)) ||
		!strings.Contains(events, "does not allow adoption in namespace shop") {
		t.Fatalf("err %v, events:\n%s", err, events)
	}
	if n := eng.ran(); n != 0 {
		t.Fatalf("%d reconciles for a refused adoption", n)
	}
}

func TestRetiredAnnotationIsReportedOnce(t *testing.T) {
	lbs, eng, rec := lbsOverFakes(t, testConfig(t, ""))
	eng.check = &engine.TooManyListenersError{Ports: 2, Limit: 1} // refused after the report
	svc := lbService(2, map[string]string{string(annotations.LBApprovePlan): "plan-0123456789ab"})
	for range 3 {
		_, _ = lbs.Ensure(t.Context(), svc, nil)
	}
	if events := drain(rec); strings.Count(events, "RetiredAnnotation") != 1 || !strings.Contains(events, "PlanApproval") {
		t.Fatalf("events:\n%s", events)
	}
}

// The ingress always carries the ipMode the API server would store, so an
// unchanged Service's status equals the stored one and is not patched.
func TestIPMode(t *testing.T) {
	vip, proxy := v1.LoadBalancerIPModeVIP, v1.LoadBalancerIPModeProxy
	withProxy := map[string]string{string(annotations.LBProxyProtocol): "true"}
	stored := func(mode *v1.LoadBalancerIPMode) v1.ServiceStatus {
		return v1.ServiceStatus{LoadBalancer: v1.LoadBalancerStatus{Ingress: []v1.LoadBalancerIngress{{IP: "192.0.2.1", IPMode: mode}}}}
	}
	https := map[string]string{string(annotations.LBHTTPSPorts): "1000", string(annotations.LBTLSSecrets): "web-tls"}
	http := map[string]string{string(annotations.LBHTTPPorts): "1000"}
	member := func(ann map[string]string) []*v1.Service {
		return []*v1.Service{{ObjectMeta: metav1.ObjectMeta{Name: "other", Annotations: ann}}}
	}
	for _, c := range []struct {
		name    string
		ann     map[string]string
		sharing []*v1.Service
		status  v1.ServiceStatus
		want    *v1.LoadBalancerIPMode
	}{
		{"new Service", nil, nil, v1.ServiceStatus{}, &vip},
		{"API server stores ipMode", nil, nil, stored(&vip), &vip},
		{"proxy protocol", withProxy, nil, stored(&vip), &proxy},
		{"https listener: TLS terminated", https, nil, stored(&vip), &proxy},
		{"http listener: HTTP terminated", http, nil, stored(&vip), &proxy},
		{"tcp listeners only, alone", nil, member(nil), stored(&vip), &vip},
		{"a group member's https listener on the shared address", nil, member(https), stored(&vip), &proxy},
		{"API server without the field", nil, nil, stored(nil), nil},
		{"proxy protocol, API server without the field", withProxy, nil, stored(nil), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Annotations: c.ann}, Status: c.status}
			got := status(&engine.LoadBalancer{IPv4: "192.0.2.1"}, annotations.Read(svc), c.sharing).Ingress[0].IPMode
			if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
				t.Fatalf("ipMode = %v, want %v", ptrString(got), ptrString(c.want))
			}
		})
	}
}

func ptrString(m *v1.LoadBalancerIPMode) string {
	if m == nil {
		return "none"
	}
	return string(*m)
}
