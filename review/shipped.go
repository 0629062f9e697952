package review

import (
	"fmt"
	"strings"
	"sync"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/example/cloud-provider-example/deploy"
)

// An admission policy is trusted only while it holds every validation
// deploy/ ships for it: one of the right name that checks less (an older
// version, or a hand-made one) does not make identities verified.

// shippedValidations are the validation expressions of the admission
// policies deploy/ ships (the base and its components), by policy name,
// white space folded.
var shippedValidations = sync.OnceValues(func() (map[string][]string, error) {
	objs, err := deploy.WithComponents(deploy.ServiceAuthor)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, o := range objs {
		if p, ok := o.(*admissionv1.ValidatingAdmissionPolicy); ok {
			for _, v := range p.Spec.Validations {
				out[p.Name] = append(out[p.Name], fold(v.Expression))
			}
		}
	}
	return out, nil
})

func fold(expr string) string { return strings.Join(strings.Fields(expr), " ") }

// shippedIn says which shipped validation pol lacks; nil when it holds
// them all.
func shippedIn(pol *admissionv1.ValidatingAdmissionPolicy) error {
	want, err := shippedValidations()
	if err != nil {
		return fmt.Errorf("read the shipped admission policies: %w", err)
	}
	have := map[string]bool{}
	for _, v := range pol.Spec.Validations {
		have[fold(v.Expression)] = true
	}
	for _, expr := range want[pol.Name] {
		if !have[expr] {
			return fmt.Errorf("ValidatingAdmissionPolicy %q is not the one this controller ships: it lacks the validation %q (apply deploy/ of this version)", pol.Name, expr)
		}
	}
	return nil
}
