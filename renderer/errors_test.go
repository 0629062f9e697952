package renderer

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
)

// What a tenant wrote reaches an error quoted or escaped, never raw: a
// port named with an escape sequence cannot clear the screen of whoever
// reads the event, the record or examplectl's output.
func TestErrorsQuoteWhatTenantsWrote(t *testing.T) {
	const clear = "\x1b[2J\x1b[HNo changes.\r\u202e"
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"port name", func() error {
			_, err := LoadBalancer(annotations.Read(testService(withPorts(port("x"+clear, corev1.ProtocolSCTP, 9, 30009)))), nil, testConfig())
			return err
		}, `render Service shop/web: port 9 ("x\x1b[2J\x1b[HNo changes.\r\u202e"): protocol SCTP is not supported`},
		{"protocol", func() error {
			_, err := LoadBalancer(annotations.Read(testService(withPorts(port("dns", corev1.Protocol("TCP"+clear), 53, 30053)))), nil, testConfig())
			return err
		}, `port 53 (dns): protocol "TCP\x1b[2J\x1b[HNo changes.\r\u202e" is not supported`},
		{"port name in a group", func() error {
			svc := testService(withPorts(port(clear, corev1.Protocol("SCTP"), 9, 30009)))
			_, rep, err := GroupLoadBalancer(lbmodel.Group{Namespace: "shop", Name: "front", Members: []*corev1.Service{svc}}, nil, testConfig())
			if err == nil || rep.Excludes(svc) == nil {
				t.Errorf("group: %v, %+v", err, rep)
			}
			return err
		}, `port 9 ("\x1b[2J\x1b[HNo changes.\r\u202e"): protocol SCTP`},
		{"input value, field and reason", func() error {
			return &lbmodel.InputError{Field: "spec.ports[0]" + clear, Value: "v" + clear, Reason: "is bad:\n" + clear}
		}, `spec.ports[0]\x1b[2J\x1b[HNo changes.\r\u202e: "v\x1b[2J\x1b[HNo changes.\r\u202e" is bad:\n\x1b[2J\x1b[HNo changes.\r\u202e`},
		{"source range", func() error {
			_, err := LoadBalancer(annotations.Read(testService(func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8" + clear} })), nil, testConfig())
			return err
		}, `spec.loadBalancerSourceRanges[0]: "10.0.0.0/8\x1b[2J\x1b[HNo changes.\r\u202e" is not a CIDR`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want it to contain %s", err, tc.want)
			}
			if strings.ContainsAny(err.Error(), "\x1b\r\n\u202e") {
				t.Errorf("a control character reached the message raw: %q", err)
			}
		})
	}
	// An ordinary name and protocol read as before, unquoted.
	err := (&UnsupportedProtocolError{Port: "sip-tls", Number: 5061, Protocol: corev1.ProtocolSCTP}).Error()
	if !strings.HasPrefix(err, "port 5061 (sip-tls): protocol SCTP is not supported") {
		t.Errorf("ordinary names: %q", err)
	}
	var pe *UnsupportedProtocolError
	if _, err := LoadBalancer(annotations.Read(testService(withPorts(port(clear, corev1.ProtocolSCTP, 9, 30009)))), nil, testConfig()); !errors.As(err, &pe) || pe.Port != clear {
		t.Errorf("the error keeps the port's name as it is for code to read: %v", err)
	}
}
