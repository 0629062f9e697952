package servicelb

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/referencegrants"
	"github.com/example/cloud-provider-example/tenancy"
)

// The controller's references read their sources: certificate and load
// balancer tags from the cloud (a fake of its reads here; the e2e tests
// read the simulator's over HTTP) and ReferenceGrants from the API server
// (a client-go fake here; TestTenancy uses a real one).
func TestReferencesReadTheirSources(t *testing.T) {
	cert := exampleapi.Certificate{ObjectMeta: exampleapi.ObjectMeta{ID: "cert-1", Name: "a", Region: "ex-west-1"},
		Tags: map[string]string{exampleapi.TagClusterID: "test", exampleapi.TagNamespace: "team-a"}}
	cloud := &fakeCloud{certificates: []exampleapi.Certificate{cert}}

	cfg := testConfig(t, "")
	cfg.ClusterID, cfg.Region = "test", "ex-west-1"
	refs := newReferences(cfg, cloud)
	refs.watchGrants(t.Context(), grantsClient(t, "team-a", "team-b", "front"))

	svc := func(ns string, ann map[string]string) *v1.Service {
		return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", UID: types.UID("u-" + ns), Annotations: ann}}
	}
	certs := map[string]string{string(annotations.LBHTTPSPorts): "443", string(annotations.LBCertificateIDs): cert.ID}
	ctx := context.Background()
	var refused *tenancy.RefusedError
	if err := refs.authorize(ctx, annotations.Read(svc("team-a", certs))); err != nil {
		t.Errorf("team-a naming its own certificate: %v", err)
	}
	if err := refs.authorize(ctx, annotations.Read(svc("team-b", certs))); !errors.As(err, &refused) {
		t.Errorf("team-b naming team-a's certificate: %v, want a refusal", err)
	}
	join := func(group string) map[string]string { return map[string]string{string(annotations.LBGroup): group} }
	if err := refs.authorize(ctx, annotations.Read(svc("team-b", join("team-a/front")))); err != nil {
		t.Errorf("team-b joining team-a/front, granted: %v", err)
	}
	if err := refs.authorize(ctx, annotations.Read(svc("team-c", join("team-a/front")))); !errors.As(err, &refused) {
		t.Errorf("team-c joining team-a/front, not granted: %v, want a refusal", err)
	}
	if err := refs.authorize(ctx, annotations.Read(svc("team-b", join("team-a/back")))); !errors.As(err, &refused) {
		t.Errorf("team-b joining team-a/back, granted front only: %v, want a refusal", err)
	}

	// A name is read from the cloud's load balancers of that name.
	cloud.lbs = append(cloud.lbs, exampleapi.LoadBalancer{ID: "lb-1", Status: exampleapi.LBStatusActive, LoadBalancerSpec: exampleapi.LoadBalancerSpec{
		Name: "shop-a", Region: "ex-west-1", IPFamily: "ipv4",
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{
			Type: "lb-small", Algorithm: "round_robin",
			Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}},
			Tags:      map[string]string{lbmodel.TagClusterID: "test", lbmodel.TagServiceNamespace: "team-a", lbmodel.TagServiceUID: "u-team-a"},
		},
	}})
	named := func(name string) map[string]string { return map[string]string{string(annotations.LBName): name} }
	if err := refs.authorize(ctx, annotations.Read(svc("team-a", named("shop-a")))); err != nil {
		t.Errorf("team-a naming its own load balancer's name: %v", err)
	}
	if err := refs.authorize(ctx, annotations.Read(svc("team-b", named("shop-a")))); !errors.As(err, &refused) {
		t.Errorf("team-b naming team-a's load balancer's name: %v, want a refusal", err)
	}
	if err := refs.authorize(ctx, annotations.Read(svc("team-b", named("shop-b")))); err != nil {
		t.Errorf("team-b naming a free name: %v", err)
	}
}

// grantsClient is a dynamic client whose API server holds one
// ReferenceGrant in ns: Services of from may join group.
func grantsClient(t *testing.T, ns, from, group string) *dynamicfake.FakeDynamicClient {
	t.Helper()
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{referencegrants.Resource: "ReferenceGrantList"}, grantObject(t, ns, from, group))
}

// grantObject is a ReferenceGrant "g" in ns: Services of from may join
// group.
func grantObject(t *testing.T, ns, from, group string) *unstructured.Unstructured {
	t.Helper()
	name := gatewayv1beta1.ObjectName(group)
	grant, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&gatewayv1beta1.ReferenceGrant{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1beta1.GroupVersion.String(), Kind: "ReferenceGrant"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Kind: "Service", Namespace: gatewayv1beta1.Namespace(from)}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Group: tenancy.GrantGroup, Kind: tenancy.GrantKind, Name: &name}},
		},
	})
	testkit.Must(t, err)
	return &unstructured.Unstructured{Object: grant}
}

// granting is the references of a controller whose cluster holds one
// ReferenceGrant (see grantsClient), watched until the test ends, and no
// cloud.
func granting(t *testing.T, ns, from, group string) *references {
	refs := newReferences(testConfig(t, ""), nil)
	refs.watchGrants(t.Context(), grantsClient(t, ns, from, group))
	return refs
}

// A cached value is served until its time is up; a failed read is not kept.
func TestTTLCache(t *testing.T) {
	var c ttlCache[int]
	reads := 0
	read := func() (int, error) { reads++; return reads, nil }
	if v, _ := c.get("k", time.Hour, read); v != 1 {
		t.Fatalf("first read = %d", v)
	}
	if v, _ := c.get("k", time.Hour, read); v != 1 || reads != 1 {
		t.Fatalf("cached read = %d after %d reads", v, reads)
	}
	if v, _ := c.get("k", 0, read); v != 2 {
		t.Fatalf("expired read = %d", v)
	}
	if _, err := c.get("x", time.Hour, func() (int, error) { return 0, errors.New("down") }); err == nil {
		t.Fatal("a failed read must fail")
	}
	if v, _ := c.get("x", time.Hour, read); v != 3 {
		t.Fatalf("after a failed read: %d, want a new read", v)
	}
	// A failed read of a key read before stands on the last value, for
	// twice the ttl.
	down := func() (int, error) { return 0, errors.New("down") }
	c.m["x"] = cached[int]{v: 3, at: time.Now().Add(-90 * time.Second)}
	if v, err := c.get("x", time.Minute, down); err != nil || v != 3 {
		t.Fatalf("a failed re-read: %d, %v; want the last value", v, err)
	}
	c.m["x"] = cached[int]{v: 3, at: time.Now().Add(-3 * time.Minute)}
	if _, err := c.get("x", time.Minute, down); err == nil {
		t.Fatal("a value read more than twice the ttl ago stood in for a failed read")
	}
}

// A ttlCache holds what was read within twice its ttl, and at most
// ttlCacheSize keys, the oldest read going first.
func TestTTLCacheBounded(t *testing.T) {
	var c ttlCache[int]
	one := func() (int, error) { return 1, nil }
	for i := range ttlCacheSize + 10 {
		if _, err := c.get(fmt.Sprint(i), time.Hour, one); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.len(); n != ttlCacheSize {
		t.Fatalf("%d keys, want %d", n, ttlCacheSize)
	}
	if _, kept := c.m["0"]; kept {
		t.Error("the oldest read was kept")
	}
	c.m["old"] = cached[int]{v: 1, at: time.Now().Add(-3 * time.Hour)}
	if _, err := c.get("new", time.Hour, one); err != nil {
		t.Fatal(err)
	}
	if _, kept := c.m["old"]; kept {
		t.Error("a read older than twice the ttl was kept")
	}
}

// addressReads counts the cloud's address reads.
type addressReads struct {
	*fakeCloud
	n int
}

func (c *addressReads) GetAddress(ctx context.Context, id string) (*exampleapi.Address, error) {
	c.n++
	return c.fakeCloud.GetAddress(ctx, id)
}

func (c *addressReads) ListAddresses(ctx context.Context, f exampleapi.AddressFilter) ([]exampleapi.Address, error) {
	c.n++
	return c.fakeCloud.ListAddresses(ctx, f)
}

// Fifty of mallory's Services naming team-a's address, each decided (as
// the keeper does at each look), cost one cloud read, not fifty; so does
// an address not found, so that the latency of a refusal tells nothing.
func TestAddressReadsKept(t *testing.T) {
	addr := exampleapi.Address{ObjectMeta: exampleapi.ObjectMeta{ID: "addr-0123456789abcdef", Name: "k8s-a", Region: "ex-west-1"}, IP: "203.0.113.9",
		Tags: map[string]string{lbmodel.TagClusterID: "test", lbmodel.TagManagedBy: "cloud-provider-example", exampleapi.TagNamespace: "team-a"}}
	cloud := &addressReads{fakeCloud: &fakeCloud{addresses: []exampleapi.Address{addr}}}
	cfg := testConfig(t, "")
	cfg.ClusterID, cfg.Region = "test", "ex-west-1"
	refs := newReferences(cfg, cloud)
	refs.watchGrants(t.Context(), grantsClient(t, "team-a", "team-b", "front"))
	var refused *tenancy.RefusedError
	for range 50 {
		svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-x", Name: "m", Annotations: map[string]string{string(annotations.LBAddress): addr.IP}}}
		if err := refs.authorize(t.Context(), annotations.Read(svc)); !errors.As(err, &refused) {
			t.Fatalf("team-x naming team-a's address: %v, want a refusal", err)
		}
	}
	if cloud.n != 1 {
		t.Errorf("%d cloud reads for 50 decisions of one address, want 1", cloud.n)
	}
	cloud.n = 0
	for range 3 {
		svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-x", Name: "m", Annotations: map[string]string{string(annotations.LBAddress): "203.0.113.10"}}}
		_ = refs.authorize(t.Context(), annotations.Read(svc))
	}
	if cloud.n != 1 {
		t.Errorf("%d cloud reads for 3 decisions of a missing address, want 1, as for one that exists", cloud.n)
	}
}
