package servicemodel

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/annotations"
)

// Check and LoadBalancerShape read what Translate reads: over the golden
// cases, Check refuses what Translate refuses (but a certificate not
// read, which only Translate sees) and accepts what it accepts, and the
// shape's listeners are the model's.
func TestCheckAndShapeAgreeWithTranslate(t *testing.T) {
	for _, c := range goldenCases(t) {
		path := c.path
		in := annotations.Read(c.Service)
		lb, terr := Translate(in, c.Nodes, c.Config)
		cerr := Check(in, c.Config)
		switch {
		case terr != nil && cerr == nil && !strings.Contains(terr.Error(), string(annotations.LBTLSSecrets)):
			t.Errorf("%s: Check accepts what Translate refuses: %v", path, terr)
		case terr == nil && cerr != nil:
			t.Errorf("%s: Check refuses what Translate accepts: %v", path, cerr)
		}
		if terr != nil {
			continue
		}
		shape, err := LoadBalancerShape(in, c.Config)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if shape.Name != lb.CloudName || shape.Type != lb.Type || shape.IPFamily != lb.IPFamily || !slices.Equal(shape.SourceCIDRs, lb.SourceCIDRs) {
			t.Errorf("%s: shape %+v, model %+v", path, shape, lb)
		}
		for i, l := range lb.Listeners {
			s := shape.Listeners[i]
			if s.Protocol != l.Protocol || s.Port != l.Port || s.TargetPort != l.TargetPort || s.Proxy != l.ProxyProtocol ||
				s.RedirectPort != l.HTTPSRedirectPort || !slices.Equal(s.Certificates, l.Certificates) {
				t.Errorf("%s: listener %d: shape %+v, model %+v", path, i, s, l)
			}
		}
	}
}

// A Service with more ports than the config allows is refused by both,
// with the limit the config set.
func TestTooManyListeners(t *testing.T) {
	var c translateIn
	for _, gc := range goldenCases(t) {
		if filepath.Base(gc.path) == "target-pool.in.yaml" {
			c = gc // two ports
		}
	}
	c.Config.MaxListeners = 1
	in := annotations.Read(c.Service)
	for _, err := range []error{Check(in, c.Config), func() error { _, err := Translate(in, c.Nodes, c.Config); return err }()} {
		var tm *TooManyListenersError
		if !errors.As(err, &tm) || tm.Limit != 1 || tm.Ports != 2 {
			t.Errorf("got %v, want a TooManyListenersError of 2 ports over 1", err)
		}
	}
}
