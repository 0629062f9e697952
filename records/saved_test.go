package records_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/records"
)

// savedFile is n bytes that stand for a saved plan file (a zip: binary).
func savedFile(seed byte, n int) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{seed}).Read(b) // never fails
	copy(b, "PK\x03\x04")
	return b
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// awaiting is a plan awaiting approval with its saved plan file.
func awaiting(id string, saved []byte) records.Plan {
	p := newPlan(id, "text of "+id, time.Now())
	p.Policy, p.Outcome, p.DecidedAt, p.Saved = "manual", records.AwaitingApproval, nil, saved
	return p
}

// secretKeys are the data keys of ws's Secrets, sorted.
func secretKeys(t *testing.T, client kubernetes.Interface, ws string) []string {
	t.Helper()
	_, _, secrets := objects(t, client, ws)
	var out []string
	for _, s := range secrets {
		for k := range s.Data {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func setOutcome(o records.Outcome) func(*records.Record) error {
	return func(r *records.Record) error {
		r.Plans[0].Outcome = o
		return nil
	}
}

// testSaved: a saved plan is kept in the record's Secret while its plan may
// still be applied, checked against its hash, and dropped once decided.
func testSaved(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	s := records.NewStore(client, ns, 3)
	ws := "saved-5a5a5a5a"
	id := "plan-5a5a5a5a5a5a"
	file := savedFile(1, 5000)
	got := mustUpdate(t, s, ws, prepend(awaiting(id, file)))
	if p := got.Plans[0]; p.Saved != nil || p.Text != "" || p.SavedSHA256 != sha(file) {
		t.Errorf("Update returned saved %d bytes, sha256 %q; want none, %s", len(p.Saved), p.SavedSHA256, sha(file))
	}
	_, _, secrets := objects(t, client, ws)
	if len(secrets) != 1 || secrets[0].Name != "ccm-plans-"+ws || secrets[0].Type != corev1.SecretTypeOpaque ||
		len(secrets[0].Data) != 1 || !bytes.Equal(secrets[0].Data[id+".tfplan"], file) {
		t.Fatalf("Secrets = %+v; want ccm-plans-%s holding only %s.tfplan", secrets, ws, id)
	}
	if b, err := s.SavedPlan(ctx, ws, id); err != nil || !bytes.Equal(b, file) {
		t.Errorf("SavedPlan = %d bytes, %v", len(b), err)
	}
	if r, _ := s.Get(ctx, ws); r.Plans[0].Saved != nil || r.Plans[0].SavedSHA256 != sha(file) {
		t.Errorf("Get: saved %d bytes, sha256 %q", len(r.Plans[0].Saved), r.Plans[0].SavedSHA256)
	}

	// Updates without Saved keep it, and the store owns SavedSHA256; so
	// does a plan-only plan.
	mustUpdate(t, s, ws, func(r *records.Record) error {
		r.Policy = "manual"
		r.Plans[0].SavedSHA256 = "forged"
		return nil
	})
	mustUpdate(t, s, ws, setOutcome(records.Planned))
	if b, err := s.SavedPlan(ctx, ws, id); err != nil || !bytes.Equal(b, file) {
		t.Errorf("SavedPlan after updates without Saved = %d bytes, %v", len(b), err)
	}

	// Bytes that are not the recorded ones are refused.
	sec := &secrets[0]
	sec.Data[id+".tfplan"] = append(slices.Clone(file), '!')
	if _, err := client.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SavedPlan(ctx, ws, id); !errors.Is(err, records.ErrSavedPlanMismatch) {
		t.Errorf("SavedPlan of edited bytes: %v; want ErrSavedPlanMismatch", err)
	}

	// A second plan awaiting approval: both kept.
	other := "plan-5b5b5b5b5b5b"
	mustUpdate(t, s, ws, prepend(awaiting(other, []byte("PK other"))))
	if keys := secretKeys(t, client, ws); !slices.Equal(keys, []string{id + ".tfplan", other + ".tfplan"}) {
		t.Errorf("Secret keys = %v", keys)
	}
	// The older one leaves the record (keep 3): its saved plan goes.
	for _, newer := range []string{"plan-5c5c5c5c5c5c", "plan-5d5d5d5d5d5d"} {
		mustUpdate(t, s, ws, prepend(newPlan(newer, "t", time.Now())))
	}
	if keys := secretKeys(t, client, ws); !slices.Equal(keys, []string{other + ".tfplan"}) {
		t.Errorf("Secret keys after %s left the record = %v", id, keys)
	}
	if _, err := s.SavedPlan(ctx, ws, id); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("SavedPlan of a plan no longer recorded: %v", err)
	}

	// Unknown plans and records, and plans never given a saved file.
	for _, c := range []struct{ ws, id string }{{ws, "plan-000000000000"}, {"saved-none", id}, {ws, "plan-5c5c5c5c5c5c"}} {
		if _, err := s.SavedPlan(ctx, c.ws, c.id); !errors.Is(err, records.ErrNotFound) {
			t.Errorf("SavedPlan(%s, %s): %v; want ErrNotFound", c.ws, c.id, err)
		}
	}
	if _, err := s.SavedPlan(ctx, ws, "../x"); err == nil || errors.Is(err, records.ErrNotFound) {
		t.Errorf("SavedPlan of an invalid id: %v", err)
	}

	// Once decided, whatever the outcome, the saved plan is dropped and its
	// hash stays in the record.
	for _, o := range []records.Outcome{records.Applied, records.Superseded, records.Failed, records.Denied, records.NoChanges} {
		ws := "saved-" + string(o)
		mustUpdate(t, s, ws, prepend(awaiting(id, file)))
		if keys := secretKeys(t, client, ws); len(keys) != 1 {
			t.Fatalf("%s: Secret keys %v before the decision", o, keys)
		}
		r := mustUpdate(t, s, ws, setOutcome(o))
		if keys := secretKeys(t, client, ws); len(keys) != 0 {
			t.Errorf("%s: saved plan kept: Secret keys %v", o, keys)
		}
		if _, err := s.SavedPlan(ctx, ws, id); !errors.Is(err, records.ErrNotFound) {
			t.Errorf("%s: SavedPlan = %v; want ErrNotFound", o, err)
		}
		if r.Plans[0].SavedSHA256 != sha(file) {
			t.Errorf("%s: SavedSHA256 = %q after the decision", o, r.Plans[0].SavedSHA256)
		}
	}

	// A saved plan given with a decided outcome is not stored.
	p := awaiting("plan-5e5e5e5e5e5e", file)
	p.Outcome = records.Applied
	r := mustUpdate(t, s, "saved-applied-at-once", prepend(p))
	if keys := secretKeys(t, client, "saved-applied-at-once"); len(keys) != 0 || r.Plans[0].SavedSHA256 != sha(file) {
		t.Errorf("applied at once: Secret keys %v, sha256 %q", keys, r.Plans[0].SavedSHA256)
	}

	if err := s.Delete(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if cms, texts, secrets := objects(t, client, ws); len(cms)+len(texts)+len(secrets) != 0 {
		t.Errorf("Delete left %d objects", len(cms)+len(texts)+len(secrets))
	}
}

// testLargeSaved: a saved plan larger than an object is cut into Secrets
// under the 1 MiB limit, read back whole, and all of them go with the
// decision.
func testLargeSaved(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	s := records.NewStore(client, ns, 0)
	ws := "large-saved-6b6b6b6b"
	id := "plan-6b6b6b6b6b6b"
	file := savedFile(2, 2*mib+mib/2)
	mustUpdate(t, s, ws, prepend(awaiting(id, file)))
	cms, texts, secrets := sizes(t, client, ws)
	t.Logf("a %d-byte saved plan in %d Secrets", len(file), secrets)
	if cms != 1 || texts != 1 || secrets < 3 {
		t.Errorf("%d ConfigMaps, %d text ConfigMaps, %d Secrets; want 1, 1 and the saved plan cut into several", cms, texts, secrets)
	}
	if b, err := s.SavedPlan(ctx, ws, id); err != nil || !bytes.Equal(b, file) {
		t.Errorf("SavedPlan = %d bytes, %v; want the %d stored", len(b), err, len(file))
	}
	if text, err := s.PlanText(ctx, ws, id); err != nil || text != "text of "+id {
		t.Errorf("PlanText = %q, %v", text, err)
	}
	mustUpdate(t, s, ws, setOutcome(records.Applied))
	if _, _, secrets := objects(t, client, ws); len(secrets) != 0 {
		t.Errorf("%d Secrets left after the plan was applied", len(secrets))
	}
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testLegacyTexts: a record written when plan texts were kept in its
// Secret gets them moved to its text ConfigMaps by the next Update.
func testLegacyTexts(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	s := records.NewStore(client, ns, 0)
	ws := "legacy-7c7c7c7c"
	id := "plan-7c7c7c7c7c7c"
	p := newPlan(id, "", time.Now())
	mustUpdate(t, s, ws, prepend(p))
	old := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "ccm-plans-" + ws, Namespace: ns,
			Labels:      map[string]string{records.LabelManagedBy: records.ManagedBy, records.LabelWorkspace: ws},
			Annotations: map[string]string{records.AnnotationWorkspace: ws},
		},
		Data: map[string][]byte{id + ".txt.gz": gzipped(t, "the old text")},
	}
	if _, err := client.CoreV1().Secrets(ns).Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PlanText(ctx, ws, id); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("PlanText read a Secret: %v", err)
	}
	mustUpdate(t, s, ws, func(r *records.Record) error { return nil })
	if text, err := s.PlanText(ctx, ws, id); err != nil || text != "the old text" {
		t.Errorf("PlanText after the move = %q, %v", text, err)
	}
	if _, _, secrets := objects(t, client, ws); len(secrets) != 0 {
		t.Errorf("%d Secrets left after the move", len(secrets))
	}
}

// testReviewer: someone who may only read ConfigMaps in the namespace reads
// records and plan texts, not saved plans.
func testReviewer(t *testing.T, c *testcluster.Cluster, admin kubernetes.Interface) {
	ctx := t.Context()
	ws := "reviewer-8d8d8d8d"
	id := "plan-8d8d8d8d8d8d"
	mustUpdate(t, records.NewStore(admin, ns, 0), ws, func(r *records.Record) error {
		r.Files = map[string]string{"main.tf": "# reviewed\n"}
		return prepend(awaiting(id, []byte("PK saved")))(r)
	})
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "records-reviewer", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "records-reviewer", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "records-reviewer"}},
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.ServiceAccountKubeconfig(t, ns, "records-reviewer"))
	if err != nil {
		t.Fatal(err)
	}
	reader := records.NewStore(unthrottledFrom(t, cfg), ns, 0)
	// The RBAC authorizer sees new bindings through an informer.
	var r *records.Record
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		r, err = reader.Get(ctx, ws)
		return err == nil, nil
	})
	if err != nil || r == nil || r.Files["main.tf"] != "# reviewed\n" || r.Plans[0].SavedSHA256 != sha([]byte("PK saved")) {
		t.Fatalf("Get as a reviewer = %+v, %v", r, err)
	}
	all, err := reader.List(ctx)
	if err != nil || !slices.ContainsFunc(all, func(r *records.Record) bool { return r.Workspace == ws }) {
		t.Errorf("List as a reviewer: %d records, %v", len(all), err)
	}
	if text, err := reader.PlanText(ctx, ws, id); err != nil || text != "text of "+id {
		t.Errorf("PlanText as a reviewer = %q, %v", text, err)
	}
	if _, err := reader.SavedPlan(ctx, ws, id); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "secrets") {
		t.Errorf("SavedPlan as a reviewer: %v; want Forbidden on Secrets", err)
	}
}
