package servicemodel

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
)

// portListener is a listener and the Service port it comes from, for
// the errors that name it.
type portListener struct {
	lbmodel.Listener
	field string // spec.ports[i]
}

// listeners are the Service's listeners, one per port, sorted by
// protocol, port and target port: tcp or udp, and http or https on the
// ports the annotations name.
func listeners(svc *corev1.Service, ann annotations.LoadBalancer) ([]lbmodel.Listener, error) {
	proxy := ann.ProxyProtocol
	if len(svc.Spec.Ports) == 0 {
		return nil, &lbmodel.InputError{Field: "spec.ports", Reason: "is empty: a load balancer needs at least one port"}
	}
	var out []portListener
	for i, p := range svc.Spec.Ports {
		field := fmt.Sprintf("spec.ports[%d]", i)
		var proto string
		switch p.Protocol {
		case corev1.ProtocolTCP, "": // the API server defaults "" to TCP
			proto = "tcp"
		case corev1.ProtocolUDP:
			proto = "udp"
		default:
			return nil, &UnsupportedProtocolError{Port: p.Name, Number: p.Port, Protocol: p.Protocol}
		}
		if p.Port < 1 || p.Port > 65535 {
			return nil, &lbmodel.InputError{Field: field + ".port", Value: fmt.Sprint(p.Port), Reason: "is out of range 1-65535"}
		}
		// To its pods, a listener forwards by its rule (podRules): it
		// takes its own port as the cloud's target port, which no request
		// reaches, and needs no node port.
		target := int(p.Port)
		if !ann.Pods() {
			if p.NodePort < 1 || p.NodePort > 65535 {
				return nil, &lbmodel.InputError{Field: field + ".nodePort", Value: fmt.Sprint(p.NodePort),
					Reason: "is not allocated: the load balancer forwards to node ports (is spec.allocateLoadBalancerNodePorts false?)"}
			}
			target = int(p.NodePort)
		}
		out = append(out, portListener{Listener: lbmodel.Listener{
			Protocol: proto, Port: int(p.Port), TargetPort: target, ProxyProtocol: proxy && proto == "tcp",
		}, field: field})
	}
	sortListeners(out)
	for i := 1; i < len(out); i++ {
		if out[i].Protocol == out[i-1].Protocol && out[i].Port == out[i-1].Port {
			return nil, &lbmodel.InputError{Field: out[i].field + ".port", Value: fmt.Sprint(out[i].Port),
				Reason: fmt.Sprintf("is used twice for %s (also %s)", out[i].Protocol, out[i-1].field)}
		}
	}
	ls := make([]lbmodel.Listener, len(out))
	for i, l := range out {
		ls[i] = l.Listener
	}
	if err := tlsPorts(ls, ann); err != nil {
		return nil, err
	}
	slices.SortFunc(ls, compareListeners)
	return ls, nil
}

func sortListeners(ls []portListener) {
	slices.SortFunc(ls, func(a, b portListener) int { return compareListeners(a.Listener, b.Listener) })
}

// compareListeners orders listeners as they render: by protocol, port
// and target port.
func compareListeners(a, b lbmodel.Listener) int {
	return cmp.Or(strings.Compare(a.Protocol, b.Protocol), a.Port-b.Port, a.TargetPort-b.TargetPort)
}

// tlsPorts turns the Service's TCP listeners named by the http-ports and
// https-ports annotations into http and https listeners, with their
// certificates, redirect and sticky sessions. A listed port that is not a
// TCP port of the Service is an error.
func tlsPorts(ls []lbmodel.Listener, ann annotations.LoadBalancer) error {
	byPort := map[int]int{}
	for i, l := range ls {
		if l.Protocol == "tcp" {
			byPort[l.Port] = i
		}
	}
	for _, list := range []struct {
		name  annotations.Name
		ports []int32
		proto string
	}{{annotations.LBHTTPPorts, ann.HTTPPorts, "http"}, {annotations.LBHTTPSPorts, ann.HTTPSPorts, "https"}} {
		for _, p := range list.ports {
			i, ok := byPort[int(p)]
			if !ok {
				return &lbmodel.InputError{Field: "annotation " + string(list.name), Value: strconv.Itoa(int(p)),
					Reason: "is not a TCP port of the Service (spec.ports[*].port)"}
			}
			ls[i].Protocol = list.proto
			ls[i].ProxyProtocol = false
		}
	}
	redirect := int(ann.HTTPSRedirectPort())
	ttl := int(cmp.Or(ann.StickySessions.TTL, annotations.DefaultStickyCookieTTL).Seconds())
	for i := range ls {
		l := &ls[i]
		switch l.Protocol {
		case "https":
			l.Certificates = slices.Clone(ann.TLSSecrets)
			l.CertificateIDs = slices.Clone(ann.CertificateIDs)
		case "http":
			if ann.RedirectHTTPToHTTPS {
				l.HTTPSRedirectPort = redirect
			}
		default:
			continue
		}
		if ann.StickySessions.Enabled && l.HTTPSRedirectPort == 0 {
			l.StickySessions = &exampleapi.StickySessions{CookieName: cmp.Or(ann.StickySessions.CookieName, annotations.DefaultStickyCookieName), TTLSeconds: ttl}
		}
	}
	return nil
}

// withoutTLSSecrets is ann as Config.SkipTLSSecrets translates it:
// nothing that needs a Secret's certificate.
func withoutTLSSecrets(ann annotations.LoadBalancer) annotations.LoadBalancer {
	if len(ann.TLSSecrets) == 0 {
		return ann
	}
	ann.HTTPPorts, ann.HTTPSPorts, ann.TLSSecrets, ann.CertificateIDs = nil, nil, nil, nil
	ann.RedirectHTTPToHTTPS, ann.StickySessions = false, annotations.StickySessions{}
	return ann
}

// certificatesFor are the certificate chains of every TLS Secret the
// Service names, from cfg.
func certificatesFor(svc *corev1.Service, secrets []string, cfg Config) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range secrets {
		pem, ok := cfg.Certificates[name]
		if !ok || pem == "" {
			return nil, &lbmodel.InputError{Field: "annotation " + string(annotations.LBTLSSecrets), Value: name,
				Reason: fmt.Sprintf("no certificate was read from Secret %s/%s", svc.Namespace, name)}
		}
		out[name] = pem
	}
	return out, nil
}
