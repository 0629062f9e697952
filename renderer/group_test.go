package renderer

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
)

var groupEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// member is a Service of group shop/storefront created minute minutes
// after the epoch.
func groupMemberSvc(ns, name string, minute int, opts ...svcOpt) *corev1.Service {
	s := testService(append([]svcOpt{func(s *corev1.Service) {
		s.Namespace, s.Name, s.UID = ns, name, types.UID("uid-"+ns+"-"+name)
		s.CreationTimestamp = metav1.NewTime(groupEpoch.Add(time.Duration(minute) * time.Minute))
		s.Annotations = map[string]string{string(annotations.LBGroup): "storefront"}
		if ns != "shop" {
			s.Annotations[string(annotations.LBGroup)] = "shop/storefront"
		}
	}}, opts...)...)
	return s
}

// testGroup has every case: a guest created first (it still comes after
// the home members), a port claimed twice, settings that differ from the
// primary's, a member that cannot be rendered.
func testGroup() lbmodel.Group {
	return lbmodel.Group{Namespace: "shop", Name: "storefront", Members: []*corev1.Service{
		groupMemberSvc("shop", "api", 2, withPorts(
			port("http", corev1.ProtocolTCP, 80, 31080), // web has it
			port("api", corev1.ProtocolTCP, 8080, 31088),
		), withAnnotations(string(annotations.LBType), "lb-large", string(annotations.LBProxyProtocol), "true")),
		groupMemberSvc("edge", "cdn", 0, withPorts(port("https", corev1.ProtocolTCP, 443, 32443))), // web has it
		groupMemberSvc("shop", "web", 1, withPorts(
			port("http", corev1.ProtocolTCP, 80, 30080),
			port("https", corev1.ProtocolTCP, 443, 30443),
		), withAnnotations(string(annotations.LBType), "lb-medium")),
		groupMemberSvc("shop", "dns", 3, withPorts(port("dns", corev1.ProtocolUDP, 53, 30053))),
		groupMemberSvc("shop", "legacy", 4, withAnnotations(string(annotations.LBAdoptID), "lb-0011", string(annotations.LBName), "legacy")),
	}}
}

func names(svcs []*corev1.Service) []string {
	var out []string
	for _, s := range svcs {
		out = append(out, s.Namespace+"/"+s.Name)
	}
	return out
}

func TestGroupReport(t *testing.T) {
	m, rep, err := GroupLoadBalancer(testGroup(), testNodes(), testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(rep.Members), []string{"shop/web", "shop/api", "shop/dns", "edge/cdn"}; !slices.Equal(got, want) {
		t.Errorf("members %v, want %v (home first, then by creation)", got, want)
	}
	var conflicts []string
	for _, c := range rep.Conflicts {
		conflicts = append(conflicts, c.Service.Name+" "+c.Listener+" lost to "+c.Winner.Name)
	}
	if want := []string{"api tcp/80 lost to web", "cdn tcp/443 lost to web"}; !slices.Equal(conflicts, want) {
		t.Errorf("conflicts %v, want %v", conflicts, want)
	}
	if len(rep.Excluded) != 1 || rep.Excluded[0].Service.Name != "legacy" || !strings.Contains(rep.Excluded[0].Err.Error(), "adopt-id") {
		t.Errorf("excluded %+v", rep.Excluded)
	}
	if err := rep.Excludes(testGroup().Members[4]); err == nil {
		t.Error("Excludes does not find the member left out")
	}
	// A member's spec.loadBalancerIP is read as its own reconcile reads
	// it: internal, it is an error, and the member is left out.
	g := testGroup()
	g.Members[3].Annotations = map[string]string{string(annotations.LBInternal): "true"}
	g.Members[3].Spec.LoadBalancerIP = "203.0.113.7"
	if _, rep, err := GroupLoadBalancer(g, testNodes(), testConfig()); err != nil || rep.Excludes(g.Members[3]) == nil {
		t.Errorf("a member of internal with spec.loadBalancerIP: %v, excluded %+v; want it left out", err, rep.Excluded)
	}
	var ignored []string
	for _, ig := range rep.Ignored {
		ignored = append(ignored, ig.Service.Name+" "+ig.Setting+"="+ig.Value+" (primary "+ig.Primary.Name+": "+ig.PrimaryValue+")")
	}
	want := []string{
		"api loadbalancer.example.com/type=lb-large (primary web: lb-medium)",
		"dns loadbalancer.example.com/type=lb-small (primary web: lb-medium)",
		"cdn loadbalancer.example.com/type=lb-small (primary web: lb-medium)",
	}
	if !slices.Equal(ignored, want) {
		t.Errorf("ignored %v, want %v", ignored, want)
	}
	if p := GroupPrimary(testGroup(), testConfig()); p == nil || p.Name != "web" {
		t.Errorf("primary %v", p)
	}
	main := string(m.Files[MainFile])
	for _, s := range []string{`type      = "lb-medium"`, `name      = "` + GroupLoadBalancerName("prod-eu", "shop", "storefront") + `"`,
		`"k8s.example.com/service-uid"       = "group:shop/storefront"`, "target_port    = 31088", "target_port    = 30053"} {
		if !strings.Contains(main, s) {
			t.Errorf("rendering lacks %s:\n%s", s, main)
		}
	}
	if strings.Count(main, "protocol       =") != 4 {
		t.Errorf("want 4 listeners (80, 443, 8080, udp 53):\n%s", main)
	}
}

// The members' order in the call does not matter; the same members render
// the same bytes.
func TestGroupOrderIndependent(t *testing.T) {
	g := testGroup()
	a, _, err := GroupLoadBalancer(g, testNodes(), testConfig())
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(g.Members)
	b, _, err := GroupLoadBalancer(g, testNodes(), testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash != b.Hash {
		t.Error("member order changes the rendering")
	}
}

// The earlier member leaving hands its port to the later one.
func TestGroupConflictMovesWhenTheWinnerLeaves(t *testing.T) {
	g := testGroup()
	g.Members = slices.DeleteFunc(g.Members, func(s *corev1.Service) bool { return s.Name == "web" })
	m, rep, err := GroupLoadBalancer(g, testNodes(), testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Conflicts) != 0 || rep.Members[0].Name != "api" {
		t.Fatalf("conflicts %+v, members %v", rep.Conflicts, names(rep.Members))
	}
	main := string(m.Files[MainFile])
	if !strings.Contains(main, "target_port    = 31080") || !strings.Contains(main, "target_port    = 32443") || !strings.Contains(main, `type      = "lb-large"`) {
		t.Errorf("api's port 80 and cdn's 443, api's type:\n%s", main)
	}
}

// A member whose listeners would pass the limit is left out as a whole.
func TestGroupListenerLimit(t *testing.T) {
	g := testGroup()
	m, rep, err := GroupLoadBalancer(g, testNodes(), withConfig(func(c *Config) { c.MaxListeners = 3 }))
	if err != nil {
		t.Fatal(err)
	}
	// web 80+443, api 8080 (80 lost): 3; dns would be the 4th, cdn has none left.
	if got := names(rep.Members); !slices.Equal(got, []string{"shop/web", "shop/api", "edge/cdn"}) {
		t.Errorf("members %v", got)
	}
	var ie *lbmodel.InputError
	if err := rep.Excludes(g.Members[3]); !errors.As(err, &ie) || !strings.Contains(err.Error(), "limit of 3") {
		t.Errorf("dns: %v", err)
	}
	if strings.Count(string(m.Files[MainFile]), "protocol       =") != 3 {
		t.Errorf("want 3 listeners:\n%s", m.Files[MainFile])
	}
}

func TestGroupNoMember(t *testing.T) {
	if _, _, err := GroupLoadBalancer(lbmodel.Group{Namespace: "shop", Name: "g"}, nil, testConfig()); err == nil {
		t.Error("an empty group rendered")
	}
	bad := groupMemberSvc("shop", "bad", 0, withAnnotations(string(annotations.LBType), "huge"))
	_, rep, err := GroupLoadBalancer(lbmodel.Group{Namespace: "shop", Name: "g", Members: []*corev1.Service{bad}}, nil, testConfig())
	if err == nil || !strings.Contains(err.Error(), "shop/bad") || len(rep.Excluded) != 1 {
		t.Errorf("a group of one invalid member: %v, %+v", err, rep)
	}
}

func TestGroupNames(t *testing.T) {
	a := GroupLoadBalancerName("c", "shop", "g")
	if len(a) != 32 || a == GroupLoadBalancerName("c", "shop", "h") || a == GroupLoadBalancerName("d", "shop", "g") ||
		a == GroupLoadBalancerName("c", "other", "g") {
		t.Errorf("name %q is not distinct per cluster and group", a)
	}
	if GroupOwnerTags("shop", "g", "c")[lbmodel.TagServiceUID] != "group:shop/g" {
		t.Error("owner tag")
	}
}

// A group asks its pool for the longest delay of its rendered members (a
// member without the annotation asks the cluster's), none when no member
// sets one; a member left out asks nothing.
func TestGroupDelay(t *testing.T) {
	delay := func(d string) func(*corev1.Service) {
		return withAnnotations(string(annotations.LBDeregistrationDelay), d)
	}
	cfg := withConfig(func(c *Config) { c.DeregistrationDelay = 45 * time.Second })
	for _, c := range []struct {
		name    string
		members []*corev1.Service
		want    string // "" no output
	}{
		{"no member sets it", []*corev1.Service{groupMemberSvc("shop", "a", 0), groupMemberSvc("shop", "b", 1)}, ""},
		{"the longest of those set", []*corev1.Service{groupMemberSvc("shop", "a", 0, delay("90s")), groupMemberSvc("shop", "b", 1, delay("1m"))}, "90"},
		{"a shorter ask with a member asking the cluster's", []*corev1.Service{groupMemberSvc("shop", "a", 0, delay("5s")), groupMemberSvc("shop", "b", 1)}, "45"},
		{"a member left out asks nothing", []*corev1.Service{groupMemberSvc("shop", "a", 0, delay("10s")),
			groupMemberSvc("shop", "b", 1, delay("1h"), withAnnotations(string(annotations.LBAdoptID), "lb-1"))}, "10"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, _, err := GroupLoadBalancer(lbmodel.Group{Namespace: "shop", Name: "g", Members: c.members}, testNodes(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			main := string(m.Files[MainFile])
			has := strings.Contains(main, `output "`+DelayOutput+`"`)
			if c.want == "" {
				if has {
					t.Fatalf("output rendered:\n%s", main)
				}
				return
			}
			if !has || !regexp.MustCompile(`value\s+=\s+`+c.want+`\n`).MatchString(main[strings.Index(main, `output "`+DelayOutput+`"`):]) {
				t.Fatalf("want %s = %s:\n%s", DelayOutput, c.want, main)
			}
		})
	}
}
