package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// TestHandOver is issue 34's hand-over on the real binary: examplectl
// export writes a Service's load balancer (and its certificate) as a
// team's root module, where terraform plan -detailed-exitcode exits 0,
// with Terraform and OpenTofu alike; deletion policy retain then hands it
// over in one approved plan that forgets it: the load balancer still
// serves, the controller's state no longer holds it; the team gives it
// back and the Service adopts it again (adopt-id), same address.
func TestHandOver(t *testing.T) {
	testsize.SkipShort(t, "exports planned with terraform and tofu, a hand-over and an adoption approved")
	t.Parallel()
	e := newEnv(t, options{shippedRules: true, webhook: true, adoption: map[string]any{"enabled": true, "namespaces": []string{"shop"}}, poolsPrune: "2s"})
	e.nodeA()
	e.namespace(t, "shop")
	e.allowTLSSecrets(t, "shop")
	rita := e.reviewer(t, "rita")
	tom := e.authoringReviewer(t, "shop", "tom") // edits shop's Services, and reviews
	services := e.kube.CoreV1().Services("shop")

	// web's nodes are a selection of its own, so that its pool is idle
	// once web is handed over.
	web, err := services.Create(testkit.Context(t), shopService("web", map[string]string{
		string(annotations.LBNodeSelector): "topology.kubernetes.io/zone=ex-west-1a"}), metav1.CreateOptions{})
	testkit.Must(t, err)
	cert := simtest.NewCert(t, simtest.CertOptions{CommonName: "secure.example.test"})
	_, err = e.kube.CoreV1().Secrets("shop").Create(testkit.Context(t), tlsSecretObject("shop", "secure-tls", cert), metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = services.Create(testkit.Context(t), httpsLBService("shop", "secure", "secure-tls"), metav1.CreateOptions{})
	testkit.Must(t, err)
	ip := e.waitIngressIn("shop", "web", 90*time.Second).Status.LoadBalancer.Ingress[0].IP
	e.waitIngressIn("shop", "secure", 90*time.Second)
	lb := e.lbOfService(t, web)

	// Exported: the load balancer with both distributions, the HTTPS one
	// (certificates: write-only keys, Terraform only) with Terraform.
	keys, err := json.Marshal(map[string]string{"secure-tls": cert.KeyPEM})
	testkit.Must(t, err)
	tofu := os.Getenv("EXAMPLE_TOFU")
	if tofu == "" {
		t.Fatal("EXAMPLE_TOFU is unset: OpenTofu comes from hack/tofu.sh")
	}
	dirs := map[string]string{}
	for _, c := range []struct{ name, service, bin string }{
		{"terraform", "web", "terraform"}, {"tofu", "web", tofu}, {"terraform-tls", "secure", "terraform"},
	} {
		dir := filepath.Join(t.TempDir(), c.name)
		dirs[c.name] = dir
		env := []string{"EXAMPLE_TOKEN=" + e.sim.Token, "EXAMPLE_PRIVATE_KEYS=" + string(keys)}
		out := e.examplectlWith(t, rita, env, "export", "shop/"+c.service, dir, "--terraform", c.bin)
		if !strings.Contains(out, "terraform plan there shows no changes") {
			t.Fatalf("export %s with %s:\n%s", c.service, c.name, out)
		}
		if code := planExitCode(t, dir, c.bin, env); code != 0 {
			t.Fatalf("%s plan -detailed-exitcode in the export of %s exits %d, want 0", c.name, c.service, code)
		}
	}

	// Handed over: tom sets retain and the type NodePort. The plan
	// forgets the load balancer and waits for a reviewer (rule
	// load-balancer-forget), whatever the apply policy: not tom, who
	// made the change.
	testkit.Must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := tom.kube.CoreV1().Services("shop").Get(testkit.Context(t), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Annotations[string(annotations.LBDeletionPolicy)] = annotations.DeletionRetain
		cur.Spec.Type = v1.ServiceTypeNodePort
		_, err = tom.kube.CoreV1().Services("shop").Update(testkit.Context(t), cur, metav1.UpdateOptions{})
		return err
	}))
	forget := e.awaitingPlanIn("shop", "web")
	testkit.Must(t, e.approveAs(t, tom, web, forget, tom.name))
	e.eventWith(t, "shop", "web", "ApprovalIgnored", "made a change this plan contains and cannot approve it")
	if _, err := e.api.GetLoadBalancer(testkit.Context(t), lb.ID); err != nil || len(e.statesHolding(t, lb.ID)) == 0 {
		t.Fatalf("the author's approval handed it over: %v", err)
	}
	testkit.Must(t, e.approveAs(t, rita, web, forget, rita.name))
	testkit.Eventually(t, 60*time.Second, "the hand-over applied", func() error {
		cur, err := services.Get(testkit.Context(t), "web", metav1.GetOptions{})
		if err != nil || len(cur.Status.LoadBalancer.Ingress) != 0 {
			return errors.New("status still shows the load balancer")
		}
		if held := e.statesHolding(t, lb.ID); len(held) > 0 {
			return errors.New("the controller's states still hold it: " + strings.Join(held, ", "))
		}
		return nil
	})
	kept, err := e.api.GetLoadBalancer(testkit.Context(t), lb.ID)
	testkit.Must(t, err)
	if kept.IPv4 != ip || kept.Status != exampleapi.LBStatusActive {
		t.Fatalf("the load balancer after the hand-over: %s, %s", kept.IPv4, kept.Status)
	}
	conns, err := e.api.OpenConnections(testkit.Context(t), lb.ID, 2)
	testkit.Must(t, err)
	if n := served(conns); n != 2 {
		t.Fatalf("the handed-over load balancer served %d of 2 connections", n)
	}
	if code := planExitCode(t, dirs["terraform"], "terraform", []string{"EXAMPLE_TOKEN=" + e.sim.Token}); code != 0 {
		t.Fatalf("the team's plan after the hand-over exits %d, want 0", code)
	}
	// It still forwards to the controller's pool of its selection, which no
	// Service selects now: the prune keeps that pool for it, and says so.
	testkit.Eventually(t, 60*time.Second, "a TargetPoolKept event naming "+lb.ID, func() error {
		l, err := e.kube.CoreV1().Events(namespace).List(testkit.Context(t), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, ev := range l.Items {
			if ev.Reason == "TargetPoolKept" && strings.Contains(ev.Message, lb.ID) {
				return nil
			}
		}
		return errors.New("none yet")
	})
	if _, err := e.api.GetTargetPool(testkit.Context(t), kept.TargetPoolID); err != nil {
		t.Fatalf("the pool the handed-over load balancer forwards to: %v", err)
	}

	// And back: the team's state lets go of it, the Service adopts it.
	tf := exec.Command("terraform", "state", "rm", "module.load_balancer.example_load_balancer.this")
	tf.Dir, tf.Env = dirs["terraform"], append(os.Environ(), "EXAMPLE_TOKEN="+e.sim.Token)
	if out, err := tf.CombinedOutput(); err != nil {
		t.Fatalf("terraform state rm: %v\n%s", err, out)
	}
	testkit.Must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := services.Get(testkit.Context(t), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		delete(cur.Annotations, string(annotations.LBDeletionPolicy))
		cur.Annotations[string(annotations.LBAdoptID)], cur.Annotations[string(annotations.LBName)] = lb.ID, lb.Name
		cur.Spec.Type = v1.ServiceTypeLoadBalancer
		_, err = services.Update(testkit.Context(t), cur, metav1.UpdateOptions{})
		return err
	}))
	adopt := e.awaitingPlanIn("shop", "web", forget)
	testkit.Must(t, e.approveAs(t, rita, web, adopt, rita.name))
	e.waitIngressIP("shop", "web", ip)
	if again := e.lbOfService(t, web); again.ID != lb.ID {
		t.Fatalf("adopted %s, want %s", again.ID, lb.ID)
	}

	t.Run("with its reserved address", func(t *testing.T) {
		// A kept address goes with its load balancer: exported in the same
		// root module, forgotten by its own workspace's reviewed plan
		// before the load balancer's, and never detached meanwhile.
		kept, err := services.Create(testkit.Context(t), shopService("kept", map[string]string{
			string(annotations.LBAddressKeep):    "true",
			string(annotations.LBDeletionPolicy): annotations.DeletionRetain,
		}), metav1.CreateOptions{})
		testkit.Must(t, err)
		ip := e.waitIngressIn("shop", "kept", 90*time.Second).Status.LoadBalancer.Ingress[0].IP
		addr := e.addressOf(t, ip)
		lb := e.lbOfService(t, kept)
		dir := filepath.Join(t.TempDir(), "kept")
		env := []string{"EXAMPLE_TOKEN=" + e.sim.Token}
		if out := e.examplectlWith(t, rita, env, "export", "shop/kept", dir); !strings.Contains(out, "its reserved address "+addr.ID) {
			t.Fatalf("export of kept:\n%s", out)
		}
		if code := planExitCode(t, dir, "terraform", env); code != 0 {
			t.Fatalf("plan in the export of kept exits %d, want 0", code)
		}
		testkit.Must(t, services.Delete(testkit.Context(t), "kept", metav1.DeleteOptions{}))
		// The address's plan first: approved on the address, as its own.
		first := e.awaitingPlanIn("shop", "kept", forget, adopt)
		testkit.Must(t, e.approveObjectAs(t, rita, objectref.Address("shop", addr.Name), first, rita.name))
		second := e.awaitingPlanIn("shop", "kept", forget, adopt, first)
		testkit.Must(t, e.approveAs(t, rita, kept, second, rita.name))
		waitGone(t, 60*time.Second, "kept", services.Get)
		if a := e.addressOf(t, ip); a.ID != addr.ID || a.LoadBalancerID != lb.ID {
			t.Fatalf("after the hand-over: address %s on %q, want %s on %s", a.ID, a.LoadBalancerID, addr.ID, lb.ID)
		}
		if held := slices.Concat(e.statesHolding(t, lb.ID), e.statesHolding(t, addr.ID)); len(held) > 0 {
			t.Fatalf("the controller's states still hold them: %v", held)
		}
		if code := planExitCode(t, dir, "terraform", env); code != 0 {
			t.Fatalf("the team's plan after the hand-over exits %d, want 0", code)
		}
	})
}

// examplectlWith is examplectl with extra environment.
func (e *env) examplectlWith(t testing.TB, u *user, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(os.Getenv("EXAMPLE_BIN"), "examplectl"), append(args, "--kubeconfig", u.kubeconfig)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("examplectl %s as %s: %v\n%s", strings.Join(args, " "), u.name, err, out)
	}
	return string(out)
}

// planExitCode runs bin plan -detailed-exitcode in dir: 0 no changes, 2
// changes (1 fails the test).
func planExitCode(t testing.TB, dir, bin string, env []string) int {
	t.Helper()
	cmd := exec.Command(bin, "plan", "-detailed-exitcode", "-input=false", "-no-color")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		t.Logf("%s plan in %s:\n%s", bin, dir, out)
		return 2
	}
	t.Fatalf("%s plan in %s: %v\n%s", bin, dir, err, out)
	return 1
}

// lbOfService is the cloud's load balancer tagged with svc's uid.
func (e *env) lbOfService(t testing.TB, svc *v1.Service) exampleapi.LoadBalancer {
	t.Helper()
	l, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	testkit.Must(t, err)
	for _, lb := range l {
		if lb.Tags[exampleapi.TagServiceUID] == string(svc.UID) {
			return lb
		}
	}
	t.Fatalf("no load balancer of %s/%s", svc.Namespace, svc.Name)
	return exampleapi.LoadBalancer{}
}

// statesHolding are the controller's state files that name id.
func (e *env) statesHolding(t testing.TB, id string) []string {
	t.Helper()
	var held []string
	testkit.Must(t, filepath.WalkDir(e.stateDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), id) {
			held = append(held, filepath.Base(p))
		}
		return nil
	}))
	return held
}

func served(c *exampleapi.ConnectionAssignment) int {
	n := 0
	for _, k := range c.Assigned {
		n += k
	}
	return n
}
