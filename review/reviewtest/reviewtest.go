// Package reviewtest holds what tests of package review and of its
// callers (package ccm) share to run a review.Board over client-go's
// fakes: a cloud config, a fake clientset that keeps resource versions as
// the API server does (the records store needs them), and the events a
// fake recorder heard. Fakes, so that a failure names the function: the e2e runs the
// same paths against a real API server.
package reviewtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/cloudconfig/cloudconfigtest"
	"github.com/example/cloud-provider-example/deploy"
)

// Config is cloudconfigtest.Minimal plus extra (YAML), loaded as the
// controller loads its --cloud-config.
func Config(t testing.TB, extra string) *cloudconfig.Config {
	t.Helper()
	c, err := cloudconfig.Load([]byte(cloudconfigtest.Minimal + extra))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Versioned makes the fake clientset keep resource versions as the API
// server does: each write sets a new one, and an update or delete that
// names another than the object's fails with a conflict. The records
// store depends on it (an object without one is created, not updated).
func Versioned(c *fake.Clientset) {
	var last int
	check := func(a clienttesting.Action, name, rv string) error {
		if rv == "" {
			return nil
		}
		cur, err := c.Tracker().Get(a.GetResource(), a.GetNamespace(), name)
		if err != nil {
			return err
		}
		m, err := meta.Accessor(cur)
		if err != nil {
			return err
		}
		if m.GetResourceVersion() != rv {
			return apierrors.NewConflict(a.GetResource().GroupResource(), name, fmt.Errorf("resource version %s, not %s", m.GetResourceVersion(), rv))
		}
		return nil
	}
	stamp := func(a clienttesting.Action) (bool, runtime.Object, error) {
		obj := a.(interface{ GetObject() runtime.Object }).GetObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			return true, nil, err
		}
		if _, ok := a.(clienttesting.UpdateAction); ok {
			if err := check(a, m.GetName(), m.GetResourceVersion()); err != nil {
				return true, nil, err
			}
		}
		last++ // reactors run under the fake's lock
		m.SetResourceVersion(strconv.Itoa(last))
		return false, nil, nil // the tracker stores it
	}
	c.PrependReactor("create", "*", stamp)
	c.PrependReactor("update", "*", stamp)
	c.PrependReactor("delete", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		d := a.(clienttesting.DeleteAction)
		if pre := d.GetDeleteOptions().Preconditions; pre != nil && pre.ResourceVersion != nil {
			if err := check(a, d.GetName(), *pre.ResourceVersion); err != nil {
				return true, nil, err
			}
		}
		return false, nil, nil
	})
}

// Event is one recorded event.
type Event struct{ Type, Reason, Message string }

// Take returns the events rec recorded since the last call.
func Take(rec *record.FakeRecorder) []Event {
	var out []Event
	for {
		select {
		case e := <-rec.Events:
			// FakeRecorder writes "<type> <reason> <message>".
			typ, rest, _ := strings.Cut(e, " ")
			reason, msg, _ := strings.Cut(rest, " ")
			out = append(out, Event{typ, reason, msg})
		default:
			return out
		}
	}
}

// Reasons are the reasons of evs, in order.
func Reasons(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Reason)
	}
	return out
}

// Policies are the admission policies deploy/ ships named names, with
// their bindings, as the API server would hold them once applied.
func Policies(t testing.TB, names ...string) []runtime.Object {
	t.Helper()
	objs, err := deploy.WithComponents(deploy.ServiceAuthor)
	if err != nil {
		t.Fatal(err)
	}
	var out []runtime.Object
	for _, o := range objs {
		switch p := o.(type) {
		case *admissionv1.ValidatingAdmissionPolicy:
			if slices.Contains(names, p.Name) {
				out = append(out, p)
			}
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			if slices.Contains(names, p.Name) {
				out = append(out, p)
			}
		}
	}
	if len(out) != 2*len(names) {
		t.Fatalf("deploy/ ships %d of the policies and bindings %v", len(out), names)
	}
	return out
}
