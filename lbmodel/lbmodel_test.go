package lbmodel

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A load balancer the cloud could not build is refused before rendering,
// saying why; its rules are not its to refuse (each fails its route).
func TestLoadBalancerValidate(t *testing.T) {
	ok := LoadBalancer{Namespace: "infra", Name: "gw",
		Listeners:    []Listener{{Protocol: "https", Port: 443, Certificates: []string{"infra/cert"}}},
		Certificates: map[string]string{"infra/cert": "-----BEGIN CERTIFICATE-----"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid load balancer refused: %v", err)
	}
	many := make([]Listener, exampleapi.MaxListeners+1)
	for i := range many {
		many[i] = Listener{Protocol: "tcp", Port: i + 1}
	}
	certs := LoadBalancer{Listeners: []Listener{{Protocol: "https", Port: 443}}, Certificates: map[string]string{}}
	for i := range exampleapi.MaxListenerCertificates + 1 {
		k := fmt.Sprintf("infra/c%d", i)
		certs.Listeners[0].Certificates, certs.Certificates[k] = append(certs.Listeners[0].Certificates, k), "-----BEGIN CERTIFICATE-----"
	}
	for want, lb := range map[string]LoadBalancer{
		"serves 26 certificates":   certs,
		"no listener":              {},
		"the cloud takes at most":  {Listeners: many},
		"rules (one per route":     {Listeners: ok.Listeners, Certificates: ok.Certificates, Rules: make([]Rule, exampleapi.MaxRules+1)},
		"has no certificate chain": {Listeners: ok.Listeners},
	} {
		if err := lb.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error saying %q, got %v", want, err)
		}
	}
}

// A rule is checked as the cloud gets it, by the cloud's own check; a
// backend whose pool is not chosen yet passes for one that is.
func TestRuleValidate(t *testing.T) {
	r := Rule{Name: "shop/web/0.0:80@any", ListenerPort: 80, Priority: 1, PathType: "prefix", Path: "/",
		Backends: []Backend{{Port: 30080, Weight: 1}}}
	if err := r.Validate(); err != nil {
		t.Fatalf("valid rule refused: %v", err)
	}
	r.Method = "BREW"
	var re *exampleapi.RuleError
	if err := r.Validate(); !errors.As(err, &re) {
		t.Errorf("a method the cloud lacks: %v, want an exampleapi.RuleError", err)
	}
	if c := (Rule{Backends: []Backend{{TargetPoolID: "tp-1", Port: 0}}}).Cloud(); len(c.Backends) != 0 {
		t.Errorf("a backend without a node port reached the cloud: %v", c.Backends)
	}
	// Query parameters and response header changes go to the cloud as
	// lists sorted by name, parameter names as written.
	c := (Rule{QueryParams: map[string]string{"animal": "whale", "ANIMAL": "Whale"},
		ResponseHeaders: &HeaderChanges{Set: map[string]string{"X-B": "2", "X-A": "1"}, Remove: []string{"Server"}}}).Cloud()
	if want := []exampleapi.QueryParamMatch{{Name: "ANIMAL", Value: "Whale"}, {Name: "animal", Value: "whale"}}; !slices.Equal(c.QueryParams, want) ||
		c.ResponseHeaders == nil || !slices.Equal(c.ResponseHeaders.Set, []exampleapi.HeaderMatch{{Name: "X-A", Value: "1"}, {Name: "X-B", Value: "2"}}) ||
		!slices.Equal(c.ResponseHeaders.Remove, []string{"Server"}) || c.RequestHeaders != nil {
		t.Errorf("query parameters and response headers as the cloud gets them: %+v", c)
	}
	c = (Rule{Redirect: &HTTPRedirect{StatusCode: 302, PathPrefix: "/new"}, Rewrite: &URLRewrite{Hostname: "b.example", Path: "/v2"}}).Cloud()
	if *c.Redirect != (exampleapi.Redirect{StatusCode: 302, PathPrefix: "/new"}) || *c.Rewrite != (exampleapi.Rewrite{Hostname: "b.example", Path: "/v2"}) {
		t.Errorf("a redirect's path and a rewrite as the cloud gets them: %+v %+v", c.Redirect, c.Rewrite)
	}
	// A backend's protocol goes to the cloud as it is; one the cloud
	// lacks is refused by its check.
	h2c := Rule{Backends: []Backend{{TargetPoolID: "tp-1", Port: 30080, Weight: 1, Protocol: exampleapi.BackendH2C}}}
	if c := h2c.Cloud(); c.Backends[0].Protocol != exampleapi.BackendH2C {
		t.Errorf("an h2c backend as the cloud gets it: %+v", c.Backends)
	}
	// A backend's TLS too; a bundle that is not PEM is the cloud's
	// refusal, naming the field and not the bundle.
	tls := Rule{Backends: []Backend{{TargetPoolID: "tp-1", Port: 30443, Weight: 1, TLS: &exampleapi.BackendTLS{CABundle: "not PEM", ServerName: "a.example"}}}}
	if c := tls.Cloud(); c.Backends[0].TLS == nil || c.Backends[0].TLS.ServerName != "a.example" {
		t.Errorf("a TLS backend as the cloud gets it: %+v", c.Backends)
	}
	if err := tls.Validate(); !errors.As(err, &re) || re.Field != "backends[0].tls.ca_bundle" || strings.Contains(err.Error(), "not PEM") {
		t.Errorf("a bundle the cloud refuses: %v, want the cloud's refusal of backends[0].tls.ca_bundle", err)
	}
	// A rule's CORS goes to the cloud as it is, checked by the cloud.
	cors := Rule{Backends: []Backend{{TargetPoolID: "tp-1", Port: 30080, Weight: 1}}, CORS: &exampleapi.CORS{AllowOrigins: []string{"https://a.example"}}}
	if c := cors.Cloud(); c.CORS == nil || c.CORS.AllowOrigins[0] != "https://a.example" {
		t.Errorf("a rule's CORS as the cloud gets it: %+v", c.CORS)
	}
	cors.CORS = &exampleapi.CORS{}
	if err := cors.Validate(); !errors.As(err, &re) || re.Field != "cors.allow_origins" {
		t.Errorf("a CORS without origins: %v, want the cloud's refusal", err)
	}
	// So does its session persistence.
	cors.CORS, cors.SessionPersistence = nil, &exampleapi.SessionPersistence{Type: exampleapi.SessionHeader, Name: "X-Session"}
	if c := cors.Cloud(); c.SessionPersistence == nil || c.SessionPersistence.Name != "X-Session" {
		t.Errorf("a rule's session persistence as the cloud gets it: %+v", c.SessionPersistence)
	}
	cors.SessionPersistence.Lifetime = exampleapi.PermanentLifetime
	if err := cors.Validate(); !errors.As(err, &re) || re.Field != "session_persistence.lifetime" {
		t.Errorf("a header session with a cookie's lifetime: %v, want the cloud's refusal", err)
	}
	// A closed backend (its BackendTLSPolicy does not resolve) is left
	// out, as one that reaches nothing.
	closed := Rule{Backends: []Backend{{Port: 30443, Weight: 1, Closed: "BackendTLSPolicy p does not resolve"}, {TargetPoolID: "tp-1", Port: 30080, Weight: 1}}}
	if c := closed.Cloud(); len(c.Backends) != 1 || c.Backends[0].Port != 30080 {
		t.Errorf("a closed backend reaches the cloud: %+v", c.Backends)
	}
	if err := closed.Validate(); err != nil {
		t.Errorf("a rule with a closed backend: %v", err)
	}
	h2c.Backends[0].Protocol = "h3"
	if err := h2c.Validate(); !errors.As(err, &re) || re.Field != "backends[0].protocol" {
		t.Errorf("a protocol the cloud lacks: %v, want the cloud's refusal", err)
	}
	// Timeouts and a retry go to the cloud as they are; a retry the
	// cloud lacks is refused by its check.
	patient := Rule{Backends: []Backend{{TargetPoolID: "tp-1", Port: 30080, Weight: 1}},
		Timeouts: &Timeouts{RequestMS: 500, BackendRequestMS: 100}, Retry: &Retry{Attempts: 2, StatusCodes: []int{503}, BackoffMS: 10}}
	if c := patient.Cloud(); *c.Timeouts != (exampleapi.Timeouts{RequestMS: 500, BackendRequestMS: 100}) ||
		c.Retry.Attempts != 2 || c.Retry.StatusCodes[0] != 503 || c.Retry.BackoffMS != 10 {
		t.Errorf("timeouts and a retry as the cloud gets them: %+v %+v", c.Timeouts, c.Retry)
	}
	patient.Retry.StatusCodes = []int{404}
	if err := patient.Validate(); !errors.As(err, &re) || re.Field != "retry.status_codes[0]" {
		t.Errorf("a retry of a 4xx: %v, want the cloud's refusal", err)
	}
	// Two Service ports' pods are two backends before their pools are
	// known; one port's twice is one, as the cloud would say.
	a, b := ServicePort{Namespace: "shop", Service: "a", Port: 80}, ServicePort{Namespace: "shop", Service: "b", Port: 80}
	r.Method, r.Backends = "", []Backend{{Port: 30080, Weight: 1}, {Pods: &a, Weight: 1}, {Pods: &b, Weight: 3}}
	if err := r.Validate(); err != nil {
		t.Errorf("node port and two Services' pods: %v", err)
	}
	r.Backends = append(r.Backends, Backend{Pods: &a, Weight: 1})
	if err := r.Validate(); !errors.As(err, &re) {
		t.Errorf("one Service port's pods twice: %v, want the cloud's refusal", err)
	}
}

// Pools, addresses and routes name the field at fault.
func TestInputsNameTheField(t *testing.T) {
	hour := 2 * time.Hour
	for want, err := range map[string]error{
		"selection":            Pool{Selection: strings.Repeat("a", MaxSelection+1)}.Validate(),
		"deregistration delay": Pool{Delay: &hour}.Validate(),
		"family":               Address{Namespace: "shop", Name: "www", Family: "ipv5"}.Validate(),
		"destination":          Route{Destination: "10.0.0.1/24", TargetInstanceID: "i-1"}.Validate(),
		"targetInstanceID":     Route{Destination: "10.0.0.0/24", TargetInstanceID: "node-1"}.Validate(),
	} {
		var in *InputError
		if !errors.As(err, &in) || in.Field != want {
			t.Errorf("%s: got %v, want an InputError on it", want, err)
		}
	}
	for _, err := range []error{Pool{Selection: "pool=blue"}.Validate(), Address{Namespace: "shop", Name: "www"}.Validate(),
		Route{Destination: "10.0.0.0/24", TargetInstanceID: "i-1"}.Validate()} {
		if err != nil {
			t.Errorf("valid input refused: %v", err)
		}
	}
}

// A Service's load balancer is refused by the model's own fields where
// its listeners, health check, ranges or targets are not what the cloud
// takes.
func TestServiceLoadBalancerValidate(t *testing.T) {
	ok := func() LoadBalancer {
		return LoadBalancer{Kind: "Service", Namespace: "shop", Name: "web",
			Listeners: []Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080, ProxyProtocol: true},
				{Protocol: "http", Port: 8080, TargetPort: 30081, HTTPSRedirectPort: 443}, {Protocol: "udp", Port: 80, TargetPort: 30053}},
			HealthCheck: &HealthCheck{Protocol: "tcp", Port: 30080},
			SourceCIDRs: []string{"10.0.0.0/8"}, Targets: []string{"i-1"}}
	}
	if err := ok().Validate(); err != nil {
		t.Fatalf("valid load balancer refused: %v", err)
	}
	hour := metav1.Duration{Duration: 2 * time.Hour}
	for field, change := range map[string]func(*LoadBalancer){
		"listeners[0].port":              func(lb *LoadBalancer) { lb.Listeners[0].Port = 0 },
		"listeners[1].targetPort":        func(lb *LoadBalancer) { lb.Listeners[1].TargetPort = 70000 },
		"listeners[2].proxyProtocol":     func(lb *LoadBalancer) { lb.Listeners[2].ProxyProtocol = true },
		"listeners[0].certificates":      func(lb *LoadBalancer) { lb.Listeners[0].CertificateIDs = []string{"cert-1"} },
		"listeners[0].httpsRedirectPort": func(lb *LoadBalancer) { lb.Listeners[0].HTTPSRedirectPort = 443 },
		"listeners[2].stickySessions":    func(lb *LoadBalancer) { lb.Listeners[2].StickySessions = &exampleapi.StickySessions{CookieName: "c"} },
		"listeners[1].port":              func(lb *LoadBalancer) { lb.Listeners[1].Port = 80 }, // http shares tcp's ports
		"healthCheck.protocol":           func(lb *LoadBalancer) { lb.HealthCheck.Protocol = "udp" },
		"healthCheck.port":               func(lb *LoadBalancer) { lb.HealthCheck.Port = 0 },
		"healthCheck.path":               func(lb *LoadBalancer) { lb.HealthCheck.Path = "/healthz" },
		"sourceCIDRs[0]":                 func(lb *LoadBalancer) { lb.SourceCIDRs[0] = "10.1.2.3/8" },
		"targets":                        func(lb *LoadBalancer) { lb.TargetPoolID = "tp-1" },
		"deregistration delay":           func(lb *LoadBalancer) { lb.DeregistrationDelay = &hour },
	} {
		lb := ok()
		change(&lb)
		var in *InputError
		if err := lb.Validate(); !errors.As(err, &in) || in.Field != field {
			t.Errorf("%s: got %v, want an InputError on it", field, err)
		}
	}
	if err := (LoadBalancer{Kind: "Service", Listeners: []Listener{{Protocol: "tcp", Port: 80}, {Protocol: "udp", Port: 80}}}).Validate(); err != nil {
		t.Errorf("tcp and udp on one port refused: %v", err)
	}
}

// A pod pool's tags name its Service port (what the sweep reads back):
// only a pool of this controller and cluster, with a port it could have
// written.
func TestPodPoolPort(t *testing.T) {
	sp := ServicePort{Namespace: "shop", Service: "web", Port: 53, Protocol: corev1.ProtocolUDP}
	tags := func(change func(map[string]string)) map[string]string {
		m := map[string]string{TagManagedBy: ManagedBy, TagClusterID: "prod", TagServiceNamespace: "shop", TagServiceName: "web", TagServicePort: sp.Tag()}
		change(m)
		return m
	}
	if got, ok := PodPoolPort(tags(func(map[string]string) {}), "prod"); !ok || got != sp || sp.Tag() != "53/UDP" {
		t.Fatalf("PodPoolPort = %v, %v; want %v", got, ok, sp)
	}
	for name, change := range map[string]func(map[string]string){
		"another cluster's":    func(m map[string]string) { m[TagClusterID] = "staging" },
		"another controller's": func(m map[string]string) { delete(m, TagManagedBy) },
		"no Service":           func(m map[string]string) { delete(m, TagServiceName) },
		"port 0":               func(m map[string]string) { m[TagServicePort] = "0/TCP" },
		"port too large":       func(m map[string]string) { m[TagServicePort] = "70000/TCP" },
		"SCTP":                 func(m map[string]string) { m[TagServicePort] = "80/SCTP" },
		"no protocol":          func(m map[string]string) { m[TagServicePort] = "80" },
	} {
		if got, ok := PodPoolPort(tags(change), "prod"); ok {
			t.Errorf("%s: PodPoolPort = %v, want none", name, got)
		}
	}
}
