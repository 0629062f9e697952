package e2e

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/lib/pq" // the pg backend's states, read as terraform writes them
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testpg"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// chaosProfile sizes a chaos run. make test runs the short profile;
// make chaos (EXAMPLE_SCALE=full) the full one.
type chaosProfile struct {
	name     string
	services int
	kills    int
	// workload is how long the creates, changes and deletes are spread over.
	workload time.Duration
	pgOutage time.Duration
	converge time.Duration
	// replicas run sharded when more than one; a kill takes one of them.
	replicas int
}

func chaosFromEnv() chaosProfile {
	if testsize.AtFull() {
		return chaosProfile{name: "full", services: 50, kills: 10, workload: 150 * time.Second, pgOutage: 30 * time.Second, converge: 10 * time.Minute, replicas: 3}
	}
	return chaosProfile{name: "short", services: 10, kills: 3, workload: 30 * time.Second, pgOutage: 8 * time.Second, converge: 5 * time.Minute, replicas: 1}
}

// chaosFaults are the cloud's faults during the run: 30 % of requests
// answered 5xx, 5 % processed and then dropped, and a rate limit that
// answers 429 with Retry-After.
var chaosFaults = exampleapi.Faults{ErrorRate: 0.3, DropRate: 0.05, RateLimit: 5, RateBurst: 10, ProvisionDelayMs: 500}

// TestChaos creates, changes and deletes Services while the cloud fails
// requests, the controller (the full run: one of three sharded replicas,
// at random) is killed with SIGKILL at random moments (and once during a
// drift sweep) and PostgreSQL, which holds the states, is down for a
// while. Afterwards every live Service has exactly one load
// balancer and no deleted one has any, no reserved address is lost or
// its IP on two load balancers, no state lock is left, no state went
// back in time, and every apply has its audit line.
func TestChaos(t *testing.T) {
	testsize.SkipShort(t, "kills and an outage over a minute of work")
	t.Parallel()
	p := chaosFromEnv()
	pg := testpg.Start(t)
	connFile := filepath.Join(t.TempDir(), "pg-conn")
	testkit.Must(t, os.WriteFile(connFile, []byte(pg.ConnStr), 0o600))
	e := newEnv(t, options{state: "pg", pgConnStrFile: connFile, driftInterval: "10s", provisionDelay: 500 * time.Millisecond,
		lockTimeout: "5s", staleLockAge: "20s", replicas: p.replicas})
	e.keepOnFailure(t, "chaos")
	e.addNode("node-a", "ex-west-1a")
	e.addNode("node-b", "ex-west-1b")
	e.waitNodesInitialised(2)
	e.allowTLSSecrets(t, "default")

	states := watchStates(t, pg.ConnStr)
	e.sim.SetFaults(t, chaosFaults)
	start := time.Now()

	var wg sync.WaitGroup
	w := &chaosWork{e: e, p: p}
	w.shared = newChaosShared(t)
	wg.Go(w.run)
	kills := 0
	for i := range p.kills {
		time.Sleep(p.workload / time.Duration(p.kills+1) * time.Duration(50+rand.IntN(100)) / 100)
		if i == p.kills/2 {
			t.Logf("chaos: PostgreSQL down for %s", p.pgOutage)
			pg.Pause()
			time.Sleep(p.pgOutage)
			testkit.Must(t, pg.Resume())
		}
		e.killAndRestart(time.Duration(200+rand.IntN(1300)) * time.Millisecond)
		kills++
	}
	wg.Wait()

	// Once more, during a drift sweep: some drift first, so the sweep
	// plans and applies.
	e.sim.SetFaults(t, exampleapi.Faults{})
	w.makeDrift(t)
	testkit.EventuallyEvery(t, 90*time.Second, 50*time.Millisecond, "a drift sweep", func() error {
		if e.countLogs("drift sweep started") == 0 {
			return fmt.Errorf("none yet")
		}
		return nil
	})
	time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
	e.killAndRestart(0)
	kills++
	faults, err := e.api.FaultStats(testkit.Context(t))
	testkit.Must(t, err)

	converged := time.Now()
	live, gone := w.result()
	testkit.EventuallyEvery(t, p.converge, time.Second, "convergence", func() error {
		if err := e.chaosConverged(t, live, gone); err != nil {
			return err
		}
		return e.sharedConverged(t, w.shared)
	})
	took := time.Since(converged)

	orphans, duplicates := e.cloudAgainst(t, w.shared.owners(live))
	addrLost, addrTwice := e.addressesAgainst(t, []string{w.shared.blueIP, w.shared.keptIP})
	leftCerts := e.orphanCertificates(t)
	locks := e.locksLeft(t, pg.ConnStr)
	lost := states.stop()
	unaudited := e.unauditedApplies(t)
	t.Logf("chaos (%s profile, %d controllers):\n%s", p.name, p.replicas, table([][]string{
		{"operations", "with them", "faults injected", "kills", "PostgreSQL down", "run", "converged in", "orphans", "orphan certificates", "duplicates", "addresses lost", "IPs on two load balancers", "locks left", "states gone back", "applies without audit"},
		{fmt.Sprintf("%d (%d creates, %d changes, %d deletes)", w.ops(), w.creates, w.changes, w.deletes),
			"a group of 2 (both changed, 1 deleted), an HTTPS Service (its TLS Secret renewed), 2 reserved addresses (one kept past its Service, one moved blue to green)",
			fmt.Sprintf("%d of %d requests (%d 5xx, %d dropped, %d 429)", faults.Errors+faults.Dropped+faults.RateLimited, faults.Requests, faults.Errors, faults.Dropped, faults.RateLimited),
			fmt.Sprint(kills), p.pgOutage.String(), converged.Sub(start).Round(time.Second).String(), took.Round(time.Second).String(),
			fmt.Sprint(len(orphans)), fmt.Sprint(len(leftCerts)), fmt.Sprint(len(duplicates)), fmt.Sprint(len(addrLost)), fmt.Sprint(len(addrTwice)), fmt.Sprint(locks), fmt.Sprint(len(lost)), fmt.Sprint(len(unaudited))},
	}))
	if len(leftCerts) > 0 {
		t.Errorf("certificates no load balancer uses: %v", leftCerts)
	}
	if len(orphans) > 0 || len(duplicates) > 0 {
		t.Errorf("orphans %v, duplicates %v", orphans, duplicates)
	}
	if len(addrLost) > 0 || len(addrTwice) > 0 {
		t.Errorf("reserved addresses lost %v, IPs on two load balancers %v", addrLost, addrTwice)
	}
	if locks > 0 {
		t.Errorf("%d state locks left", locks)
	}
	if len(lost) > 0 {
		t.Errorf("states went back in time: %v", lost)
	}
	if len(unaudited) > 0 {
		t.Errorf("applies without an audit line: %v", unaudited)
	}
}

// keepOnFailure copies, when t fails, every controller log and audit log
// of the env somewhere that outlives the test, for the post-mortem.
func (e *env) keepOnFailure(t testing.TB, name string) {
	t.Cleanup(func() {
		if t.Failed() {
			keep, err := os.MkdirTemp("", name+"-failed-")
			if err == nil && exec.Command("cp", "-r", e.dir, keep).Run() == nil {
				t.Logf("%s: logs kept in %s", name, keep)
			}
		}
	})
}

// killAndRestart kills the controller, or one replica at random, with
// SIGKILL, and starts it again after down.
func (e *env) killAndRestart(down time.Duration) {
	if e.replicas == nil {
		e.killCCM(e.ccm)
		time.Sleep(down)
		e.startCCM()
		return
	}
	r := e.replicas[rand.IntN(len(e.replicas))]
	e.t.Logf("chaos: kill replica %s", r.name)
	e.killCCM(r.cmd)
	time.Sleep(down)
	e.startSharded(r)
	if r == e.replicas[0] {
		e.ccm, e.ccmLog, e.securePort = r.cmd, r.log, r.securePort
	}
}

// countLogs counts the lines containing s in every controller log of the
// env, of every process so far.
func (e *env) countLogs(s string) int {
	logs, err := filepath.Glob(filepath.Join(e.dir, "ccm-*.log"))
	testkit.Must(e.t, err)
	n := 0
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		n += strings.Count(string(data), s)
	}
	return n
}

// chaosWork creates, changes and deletes Services; shared are a group
// and an HTTPS Service, through the same faults and kills.
type chaosWork struct {
	e      *env
	p      chaosProfile
	shared *chaosShared

	mu                        sync.Mutex
	uids                      map[string]string // name -> uid
	deleted                   map[string]bool
	creates, changes, deletes int
}

func (w *chaosWork) ops() int { return w.creates + w.changes + w.deletes }

func (w *chaosWork) pause() {
	time.Sleep(w.p.workload / time.Duration(3*w.p.services) * time.Duration(50+rand.IntN(100)) / 100)
}

func (w *chaosWork) run() {
	e, t := w.e, w.e.t
	w.uids, w.deleted = map[string]string{}, map[string]bool{}
	svcs := e.kube.CoreV1().Services("default")
	if err := w.shared.create(e); err != nil {
		t.Errorf("create the group and the HTTPS Service: %v", err)
		return
	}
	// The addresses move beside the rest: blue shows its address first.
	moved := make(chan error, 1)
	go func() { moved <- w.shared.moveAddresses(e) }()
	defer func() {
		if err := <-moved; err != nil {
			t.Errorf("move the reserved addresses: %v", err)
		}
	}()
	for i := range w.p.services {
		s, err := svcs.Create(testkit.Context(t), lbService(fmt.Sprintf("chaos-%02d", i), 80), metav1.CreateOptions{})
		if err != nil {
			t.Errorf("create: %v", err)
			return
		}
		w.mu.Lock()
		w.uids[s.Name], w.creates = string(s.UID), w.creates+1
		w.mu.Unlock()
		w.pause()
	}
	for i := range w.p.services {
		name := fmt.Sprintf("chaos-%02d", i)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s, err := svcs.Get(testkit.Context(t), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Spec.Ports[0].Port = 8080
			_, err = svcs.Update(testkit.Context(t), s, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Errorf("change %s: %v", name, err)
			return
		}
		w.mu.Lock()
		w.changes++
		w.mu.Unlock()
		w.pause()
	}
	if err := w.shared.change(e); err != nil {
		t.Errorf("change the group and the HTTPS Service: %v", err)
		return
	}
	for i := 0; i < w.p.services; i += 3 {
		name := fmt.Sprintf("chaos-%02d", i)
		if err := svcs.Delete(testkit.Context(t), name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete %s: %v", name, err)
			return
		}
		w.mu.Lock()
		w.deleted[name], w.deletes = true, w.deletes+1
		w.mu.Unlock()
		w.pause()
	}
}

// chaosShared: members chaos-g0 and chaos-g1 of group chaos (ports 81 and
// 82, changed to 8081 and 8082; then chaos-g1 is deleted), chaos-tls,
// https on 443 with the certificate of TLS Secret chaos-tls (renewed), and
// two reserved addresses: chaos-kept's, kept past its Service, and
// chaos-blue's, moved to chaos-green when blue lets go.
type chaosShared struct {
	first, renewed simtest.Cert
	tlsUID         string
	// blueUID and greenUID own load balancers; blueIP and keptIP are the
	// reserved addresses (set by change).
	blueUID, greenUID, blueIP, keptIP string
}

const chaosGroupUID = "group:default/chaos" // the group's owner tag

func newChaosShared(t *testing.T) *chaosShared {
	return &chaosShared{
		first:   simtest.NewCert(t, simtest.CertOptions{CommonName: "chaos.example.test"}),
		renewed: simtest.NewCert(t, simtest.CertOptions{CommonName: "chaos.example.test"}),
	}
}

func (c *chaosShared) create(e *env) error {
	svcs := e.kube.CoreV1().Services("default")
	for i, port := range []int32{81, 82} {
		m := lbService(fmt.Sprintf("chaos-g%d", i), port)
		m.Annotations = map[string]string{string(annotations.LBGroup): "chaos"}
		if _, err := svcs.Create(testkit.Context(e.t), m, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if _, err := e.kube.CoreV1().Secrets("default").Create(testkit.Context(e.t), tlsSecretObject("default", "chaos-tls", c.first), metav1.CreateOptions{}); err != nil {
		return err
	}
	tls := lbService("chaos-tls", 443)
	tls.Annotations = map[string]string{string(annotations.LBHTTPSPorts): "443", string(annotations.LBTLSSecrets): "chaos-tls"}
	s, err := svcs.Create(testkit.Context(e.t), tls, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	c.tlsUID = string(s.UID)
	for _, name := range []string{"chaos-blue", "chaos-kept"} {
		kept := lbService(name, 80)
		kept.Annotations = map[string]string{string(annotations.LBAddressKeep): "true"}
		if s, err = svcs.Create(testkit.Context(e.t), kept, metav1.CreateOptions{}); err != nil {
			return err
		}
		if name == "chaos-blue" {
			c.blueUID = string(s.UID)
		}
	}
	return nil
}

// moveAddresses takes chaos-blue's and chaos-kept's reserved IPs once
// they show them, then: chaos-green names blue's, blue lets go of it,
// and chaos-kept is deleted (beside the other Services' work).
func (c *chaosShared) moveAddresses(e *env) error {
	svcs := e.kube.CoreV1().Services("default")
	deadline := time.Now().Add(5 * time.Minute)
	for _, ip := range []*string{&c.blueIP, &c.keptIP} {
		name := map[*string]string{&c.blueIP: "chaos-blue", &c.keptIP: "chaos-kept"}[ip]
		for *ip == "" {
			s, err := svcs.Get(testkit.Context(e.t), name, metav1.GetOptions{})
			if err == nil && len(s.Status.LoadBalancer.Ingress) > 0 {
				*ip = s.Status.LoadBalancer.Ingress[0].IP
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s shows no address after 5 minutes", name)
			}
			time.Sleep(time.Second)
		}
	}
	green := lbService("chaos-green", 80)
	green.Spec.LoadBalancerIP = c.blueIP
	s, err := svcs.Create(testkit.Context(e.t), green, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	c.greenUID = string(s.UID)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		b, err := svcs.Get(testkit.Context(e.t), "chaos-blue", metav1.GetOptions{})
		if err != nil {
			return err
		}
		delete(b.Annotations, string(annotations.LBAddressKeep))
		_, err = svcs.Update(testkit.Context(e.t), b, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	return svcs.Delete(testkit.Context(e.t), "chaos-kept", metav1.DeleteOptions{})
}

func (c *chaosShared) change(e *env) error {
	svcs := e.kube.CoreV1().Services("default")
	for i, port := range []int32{8081, 8082} {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			m, err := svcs.Get(testkit.Context(e.t), fmt.Sprintf("chaos-g%d", i), metav1.GetOptions{})
			if err != nil {
				return err
			}
			m.Spec.Ports[0].Port = port
			_, err = svcs.Update(testkit.Context(e.t), m, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return err
		}
	}
	renewTLSSecret(e.t, e.kube, "default", "chaos-tls", c.renewed)
	return svcs.Delete(testkit.Context(e.t), "chaos-g1", metav1.DeleteOptions{})
}

// owners is live with the group and the HTTPS Service: who may own a
// load balancer.
func (c *chaosShared) owners(live map[string]string) map[string]string {
	out := maps.Clone(live)
	out["group chaos"], out["chaos-tls"] = chaosGroupUID, c.tlsUID
	out["chaos-blue"], out["chaos-green"] = c.blueUID, c.greenUID
	return out
}

// sharedConverged: the group's one load balancer listens on chaos-g0's
// port only and chaos-g0 shows its address; chaos-g1 is gone; chaos-tls's
// load balancer serves the renewed certificate.
func (e *env) sharedConverged(t testing.TB, c *chaosShared) error {
	byUID := e.lbsByUID(t)
	g := byUID[chaosGroupUID]
	if len(g) != 1 || g[0].Status != "active" || len(g[0].Listeners) != 1 || g[0].Listeners[0].Port != 8081 {
		return fmt.Errorf("group chaos: load balancers %+v", g)
	}
	svcs := e.kube.CoreV1().Services("default")
	if s, err := svcs.Get(testkit.Context(t), "chaos-g0", metav1.GetOptions{}); err != nil || len(s.Status.LoadBalancer.Ingress) == 0 || s.Status.LoadBalancer.Ingress[0].IP != g[0].IPv4 {
		return fmt.Errorf("chaos-g0 not on the group's address (%v)", err)
	}
	if _, err := svcs.Get(testkit.Context(t), "chaos-g1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleted chaos-g1 still there (%v)", err)
	}
	tls := byUID[c.tlsUID]
	if len(tls) != 1 || tls[0].Status != "active" || len(tls[0].Listeners) != 1 || len(tls[0].Listeners[0].CertificateIDs) != 1 {
		return fmt.Errorf("chaos-tls: load balancers %+v", tls)
	}
	cert, err := e.api.GetCertificate(testkit.Context(t), tls[0].Listeners[0].CertificateIDs[0])
	if err != nil {
		return err
	}
	if cert.Fingerprint != c.renewed.Fingerprint {
		return fmt.Errorf("chaos-tls serves certificate %s, not the renewed one", cert.ID)
	}
	return e.addressesConverged(t, c, byUID)
}

// addressesConverged: chaos-green shows blue's reserved IP, held by its
// load balancer; chaos-blue shows its load balancer's own new address;
// chaos-kept's address is reserved and detached.
func (e *env) addressesConverged(t testing.TB, c *chaosShared, byUID map[string][]exampleapi.LoadBalancer) error {
	green, blue := byUID[c.greenUID], byUID[c.blueUID]
	if len(green) != 1 || len(blue) != 1 {
		return fmt.Errorf("load balancers: chaos-green %d, chaos-blue %d", len(green), len(blue))
	}
	byIP := map[string]exampleapi.Address{}
	for _, a := range e.addresses(t) {
		byIP[a.IP] = a
	}
	if a, ok := byIP[c.blueIP]; !ok || a.LoadBalancerID != green[0].ID {
		return fmt.Errorf("blue's address %s: %+v, want it on chaos-green's %s", c.blueIP, a, green[0].ID)
	}
	if a, ok := byIP[c.keptIP]; !ok || a.LoadBalancerID != "" {
		return fmt.Errorf("chaos-kept's address %s: %+v, want it kept, detached", c.keptIP, a)
	}
	svcs := e.kube.CoreV1().Services("default")
	for name, want := range map[string]string{"chaos-green": c.blueIP, "chaos-blue": blue[0].IPv4} {
		s, err := svcs.Get(testkit.Context(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ing := s.Status.LoadBalancer.Ingress; len(ing) == 0 || ing[0].IP != want {
			return fmt.Errorf("%s shows %v, want %s", name, ing, want)
		}
	}
	return nil
}

// addressesAgainst are the reserved addresses lost (of want, the IPs
// reserved in the run) and the IPs two load balancers have.
func (e *env) addressesAgainst(t testing.TB, want []string) (lost, twice []string) {
	byIP := map[string]bool{}
	for _, a := range e.addresses(t) {
		byIP[a.IP] = true
	}
	for _, ip := range want {
		if !byIP[ip] {
			lost = append(lost, ip)
		}
	}
	lbs, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	testkit.Must(t, err)
	on := map[string][]string{}
	for _, lb := range lbs {
		if lb.IPv4 != "" {
			on[lb.IPv4] = append(on[lb.IPv4], lb.ID)
		}
	}
	for ip, ids := range on {
		if len(ids) > 1 {
			twice = append(twice, ip+" on "+strings.Join(ids, ", "))
		}
	}
	return lost, twice
}

// orphanCertificates are the certificates no load balancer serves.
func (e *env) orphanCertificates(t testing.TB) []string {
	certs, err := e.api.ListCertificates(testkit.Context(t), exampleapi.CertificateFilter{})
	testkit.Must(t, err)
	served, err := e.api.CertificatesInUse(testkit.Context(t), "")
	testkit.Must(t, err)
	var out []string
	for _, c := range certs {
		if !served[c.ID] {
			out = append(out, c.ID+" ("+c.Name+")")
		}
	}
	return out
}

// result is the uids of the live and of the deleted Services.
func (w *chaosWork) result() (live, gone map[string]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	live, gone = map[string]string{}, map[string]string{}
	for name, uid := range w.uids {
		if w.deleted[name] {
			gone[name] = uid
		} else {
			live[name] = uid
		}
	}
	return live, gone
}

// makeDrift changes a live Service's load balancer behind Terraform's back.
func (w *chaosWork) makeDrift(t *testing.T) {
	live, _ := w.result()
	for _, uid := range live {
		l, err := w.e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
		testkit.Must(t, err)
		for _, lb := range l {
			if lb.Tags["k8s.example.com/service-uid"] == uid && lb.Status == "active" {
				_, err := w.e.api.UpdateLoadBalancer(testkit.Context(t), lb.ID, exampleapi.UpdateLoadBalancerRequest{
					Type: "lb-large", Algorithm: lb.Algorithm, Listeners: lb.Listeners, Targets: lb.Targets, TargetPoolID: lb.TargetPoolID, Tags: lb.Tags, HealthCheck: lb.HealthCheck,
				}, 0)
				testkit.Must(t, err)
				return
			}
		}
	}
}

// chaosConverged: every live Service has its ingress and one load
// balancer listening on 8080; every deleted one is gone with its load
// balancer.
func (e *env) chaosConverged(t testing.TB, live, gone map[string]string) error {
	byUID := e.lbsByUID(t)
	for name, uid := range live {
		s, err := e.kube.CoreV1().Services("default").Get(testkit.Context(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Status.LoadBalancer.Ingress) == 0 {
			return fmt.Errorf("%s has no ingress", name)
		}
		lbs := byUID[uid]
		if len(lbs) != 1 || len(lbs[0].Listeners) != 1 || lbs[0].Listeners[0].Port != 8080 || lbs[0].Status != "active" {
			return fmt.Errorf("%s: load balancers %+v", name, lbs)
		}
	}
	for name, uid := range gone {
		if _, err := e.kube.CoreV1().Services("default").Get(testkit.Context(t), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleted %s still there (%v)", name, err)
		}
		if n := len(byUID[uid]); n != 0 {
			return fmt.Errorf("deleted %s still has %d load balancers", name, n)
		}
	}
	return nil
}

func (e *env) lbsByUID(t testing.TB) map[string][]exampleapi.LoadBalancer {
	l, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	testkit.Must(t, err)
	out := map[string][]exampleapi.LoadBalancer{}
	for _, lb := range l {
		uid := lb.Tags["k8s.example.com/service-uid"]
		out[uid] = append(out[uid], lb)
	}
	return out
}

// cloudAgainst lists load balancers that belong to no live Service
// (orphans) and live Services with more than one (duplicates).
func (e *env) cloudAgainst(t testing.TB, live map[string]string) (orphans, duplicates []string) {
	owner := map[string]string{}
	for name, uid := range live {
		owner[uid] = name
	}
	for uid, lbs := range e.lbsByUID(t) {
		switch {
		case owner[uid] == "":
			for _, lb := range lbs {
				orphans = append(orphans, lb.ID+" ("+lb.Name+")")
			}
		case len(lbs) > 1:
			duplicates = append(duplicates, owner[uid])
		}
	}
	return orphans, duplicates
}

// locksLeft counts state locks still held once the controller is idle:
// PostgreSQL advisory locks (the pg backend's) and locks in the records.
func (e *env) locksLeft(t testing.TB, conn string) int {
	db, err := sql.Open("postgres", conn)
	testkit.Must(t, err)
	defer db.Close()
	n := 0
	testkit.Eventually(t, 60*time.Second, "no state lock held", func() error {
		if err := db.QueryRowContext(testkit.Context(t), "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%d advisory locks", n)
		}
		return nil
	})
	all, err := records.NewStore(e.kube, namespace, 0).List(testkit.Context(t))
	testkit.Must(t, err)
	for _, r := range all {
		if r.Lock != nil {
			n++
			t.Logf("record %s still shows lock %s (holder %q, seen %s)", r.Workspace, r.Lock.ID, r.Lock.Holder, r.Lock.SeenAt.Format(time.RFC3339Nano))
		}
	}
	return n
}

// appliedRE finds the plans the runner started applying, in CCM logs.
var appliedRE = regexp.MustCompile(`"terraform apply starting" workspace="[^"]+" plan="(plan-[0-9a-f]{12})"`)

// unauditedApplies lists the plans any CCM process started applying
// without an audit line (written before the apply starts).
func (e *env) unauditedApplies(t testing.TB) []string {
	audited := map[string]bool{}
	for _, a := range e.auditEntries(t) {
		if a.Action == "apply" || a.Action == "destroy" {
			audited[a.PlanID] = true
		}
	}
	logs, err := filepath.Glob(filepath.Join(e.dir, "ccm-*.log"))
	testkit.Must(t, err)
	var out []string
	applied := 0
	for _, l := range logs {
		data, err := os.ReadFile(l)
		testkit.Must(t, err)
		for _, m := range appliedRE.FindAllStringSubmatch(string(data), -1) {
			applied++
			if !audited[m[1]] {
				out = append(out, m[1])
			}
		}
	}
	if applied == 0 {
		t.Fatal("no apply found in the CCM logs: is -v=2 on?")
	}
	return out
}

// stateWatch polls the pg backend's states and notes every state whose
// serial went down, or whose lineage changed: a lost state.
type stateWatch struct {
	stopped chan struct{}
	done    chan struct{}
	lost    []string
}

func watchStates(t testing.TB, conn string) *stateWatch {
	db, err := sql.Open("postgres", conn)
	testkit.Must(t, err)
	w := &stateWatch{stopped: make(chan struct{}), done: make(chan struct{})}
	type seen struct {
		lineage string
		serial  int64
	}
	last := map[string]seen{}
	go func() {
		defer close(w.done)
		defer db.Close()
		for {
			select {
			case <-w.stopped:
				return
			case <-time.After(200 * time.Millisecond):
			}
			rows, err := db.Query("SELECT name, data FROM ccm.states")
			if err != nil {
				continue // PostgreSQL is down, or the table is not there yet
			}
			for rows.Next() {
				var name, data string
				if rows.Scan(&name, &data) != nil {
					continue
				}
				var st struct {
					Lineage string `json:"lineage"`
					Serial  int64  `json:"serial"`
				}
				if json.Unmarshal([]byte(data), &st) != nil || st.Lineage == "" {
					continue
				}
				if prev, ok := last[name]; ok && (prev.lineage != st.Lineage || st.Serial < prev.serial) {
					w.lost = append(w.lost, fmt.Sprintf("%s: lineage %s serial %d, then lineage %s serial %d", name, prev.lineage, prev.serial, st.Lineage, st.Serial))
				}
				last[name] = seen{st.Lineage, st.Serial}
			}
			rows.Close()
		}
	}()
	t.Cleanup(func() { w.stop() })
	return w
}

func (w *stateWatch) stop() []string {
	select {
	case <-w.stopped:
	default:
		close(w.stopped)
	}
	<-w.done
	return w.lost
}

// table formats rows as an aligned text table.
func table(rows [][]string) string {
	if len(rows) == 0 {
		return ""
	}
	// One row of values: print it as "column: value" lines, readable in a log.
	var b strings.Builder
	width := 0
	for _, h := range rows[0] {
		width = max(width, len(h))
	}
	for r := 1; r < len(rows); r++ {
		for i, h := range rows[0] {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, h, rows[r][i])
		}
	}
	return b.String()
}
