package servicelb

import (
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/preview"
	"github.com/example/cloud-provider-example/reviewapi"
)

func request(t *testing.T, old, cur *v1.Service, dryRun bool) *admissionv1.AdmissionRequest {
	t.Helper()
	raw := func(s *v1.Service) runtime.RawExtension {
		if s == nil {
			return runtime.RawExtension{}
		}
		data, err := json.Marshal(s)
		testkit.Must(t, err)
		return runtime.RawExtension{Raw: data}
	}
	op := admissionv1.Update
	if old == nil {
		op = admissionv1.Create
	}
	return &admissionv1.AdmissionRequest{Operation: op, Object: raw(cur), OldObject: raw(old), DryRun: ptr.To(dryRun),
		UserInfo: authenticationv1.UserInfo{Username: "alice"}}
}

// The preview's decisions that need no terraform: a refusal (a warning,
// or with webhook.refuse a denial), a stored edit from the renderings,
// an edit that renders nothing new.
func TestPreviewWithoutTerraform(t *testing.T) {
	old := lbService(1, nil)
	bad := lbService(1, map[string]string{"loadbalancer.example.com/internl": "true"})
	more := lbService(2, nil)
	labelled := lbService(1, nil)
	labelled.Labels = map[string]string{"team": "a"}
	for _, tc := range []struct {
		name     string
		refuse   bool
		old, cur *v1.Service
		allowed  bool
		outcome  preview.Outcome
		says     string
	}{
		{"refused: a warning", false, old, bad, true, preview.Refused, "the controller would refuse this Service"},
		{"refused, with webhook.refuse: denied", true, old, bad, false, preview.Refused, "the controller would refuse this Service"},
		{"a stored edit: the renderings", false, old, more, true, preview.Changes, "listener tcp/1001 added"},
		{"nothing rendered changes", false, old, labelled, true, preview.NoChange, "the edit changes nothing the controller renders"},
		{"a new Service", false, nil, old, true, preview.Changes, "a new load balancer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, "")
			cfg.Webhook.Refuse = tc.refuse
			lbs, eng, _ := lbsOverFakes(t, cfg)
			a := lbs.Admission(nil)
			resp := a.Preview(t.Context(), request(t, tc.old, tc.cur, false))
			if resp.Allowed != tc.allowed {
				t.Errorf("allowed %t, want %t (%+v)", resp.Allowed, tc.allowed, resp.Result)
			}
			if o, ok := preview.ParseOutcome(resp.Warnings); !ok || o != tc.outcome {
				t.Errorf("outcome %v (%t), want %v", o, ok, tc.outcome)
			}
			if !strings.Contains(strings.Join(resp.Warnings, "\n"), tc.says) {
				t.Errorf("warnings do not say %q:\n%s", tc.says, strings.Join(resp.Warnings, "\n"))
			}
			if eng.previews != 0 {
				t.Errorf("%d plans for a stored edit", eng.previews)
			}
		})
	}

	// In error and naming another namespace's group: the error, once.
	both := lbService(1, map[string]string{"loadbalancer.example.com/internl": "true", string(annotations.LBGroup): "team-x/front"})
	lbs, _, _ := lbsOverFakes(t, testConfig(t, ""))
	warned := strings.Join(lbs.Admission(nil).Preview(t.Context(), request(t, old, both, false)).Warnings, "\n")
	if n := strings.Count(warned, "internl"); n != 1 {
		t.Errorf("the annotation error told %d times:\n%s", n, warned)
	}
}

func TestAuthorPatch(t *testing.T) {
	a := &Admission{}
	author := reviewapi.AuthorAnnotation
	withAuthor := func(name string) *v1.Service {
		return lbService(1, map[string]string{author: name})
	}
	for _, tc := range []struct {
		name     string
		old, cur *v1.Service
		patch    string
	}{
		{"create without annotations", nil, lbService(1, nil), `[{"op":"add","path":"/metadata/annotations","value":{"review.example.com/author":"alice"}}]`},
		{"create naming bob", nil, withAuthor("bob"), `[{"op":"add","path":"/metadata/annotations/review.example.com~1author","value":"alice"}]`},
		{"a rendered change by alice", withAuthor("bob"), lbService(2, map[string]string{author: "bob"}), `[{"op":"add","path":"/metadata/annotations/review.example.com~1author","value":"alice"}]`},
		{"a label: bob's stays", withAuthor("bob"), withAuthor("bob"), ``},
		{"a label, author dropped: restored", withAuthor("bob"), lbService(1, map[string]string{"x": "y"}), `[{"op":"add","path":"/metadata/annotations/review.example.com~1author","value":"bob"}]`},
		{"no author, carol's name set: removed", lbService(1, nil), withAuthor("carol"), `[{"op":"remove","path":"/metadata/annotations/review.example.com~1author"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := a.Author(t.Context(), request(t, tc.old, tc.cur, false))
			if !resp.Allowed || string(resp.Patch) != tc.patch {
				t.Errorf("allowed %t, patch %s; want %s", resp.Allowed, resp.Patch, tc.patch)
			}
		})
	}
}

// A namespace's dry runs beyond its budget are previewed from the
// renderings: a loop of previews costs its own namespace, not the
// controller's terraform.
func TestPreviewBudgetPerNamespace(t *testing.T) {
	cfg := testConfig(t, "")
	cfg.Webhook.PreviewsPerMinute, cfg.Webhook.PreviewBurst = 1, 2
	lbs, eng, _ := lbsOverFakes(t, cfg)
	eng.previewErr = engine.ErrNoState // as an engine with no state answers
	nodes := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Core().V1().Nodes().Lister()
	a := lbs.Admission(nodes)
	old, more := lbService(1, nil), lbService(2, nil)
	var got []string
	for range 3 {
		got = append(got, strings.Join(a.Preview(t.Context(), request(t, old, more, true)).Warnings, "\n"))
	}
	for i, w := range got[:2] {
		if strings.Contains(w, "previews a minute") {
			t.Errorf("dry run %d fell back on the budget:\n%s", i, w)
		}
	}
	if !strings.Contains(got[2], "namespace shop used its 1 previews a minute") {
		t.Errorf("the third dry run in a minute:\n%s", got[2])
	}
	other := lbService(2, nil)
	other.Namespace = "other"
	oldOther := lbService(1, nil)
	oldOther.Namespace = "other"
	if w := strings.Join(a.Preview(t.Context(), request(t, oldOther, other, true)).Warnings, "\n"); strings.Contains(w, "previews a minute") {
		t.Errorf("another namespace's dry run fell back on shop's budget:\n%s", w)
	}
	if eng.previews != 3 {
		t.Errorf("%d plans, want 3: shop's two within its budget, other's one", eng.previews)
	}
}
