package renderer

import (
	"slices"

	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/servicemodel"
)

// OwnerTagKeys are the tags that name a load balancer's owner: another
// value for one of them means another cluster's or Service's.
var OwnerTagKeys = []string{lbmodel.TagClusterID, lbmodel.TagServiceUID}

// OwnerTags are the owner tags svc's load balancer carries
// (servicemodel.OwnerTags).
func OwnerTags(svc *corev1.Service, clusterID string) map[string]string {
	return servicemodel.OwnerTags(svc, clusterID)
}

// loadBalancerInputs are the load balancer module's arguments, in the
// order a reviewer reads them, from lb's description.
func loadBalancerInputs(lb lbmodel.LoadBalancer) []input {
	ls := make([]cty.Value, len(lb.Listeners))
	for i, l := range lb.Listeners {
		ls[i] = listenerValue(l)
	}
	hc := cty.NullVal(cty.DynamicPseudoType)
	if h := lb.HealthCheck; h != nil {
		attrs := map[string]cty.Value{
			"protocol":            cty.StringVal(h.Protocol),
			"port":                cty.NumberIntVal(int64(h.Port)),
			"interval_seconds":    cty.NumberIntVal(int64(h.IntervalSeconds)),
			"timeout_seconds":     cty.NumberIntVal(int64(h.TimeoutSeconds)),
			"healthy_threshold":   cty.NumberIntVal(int64(h.HealthyThreshold)),
			"unhealthy_threshold": cty.NumberIntVal(int64(h.UnhealthyThreshold)),
		}
		setString(attrs, "path", h.Path)
		hc = cty.ObjectVal(attrs)
	}
	in := []input{
		{name: "name", value: cty.StringVal(lb.CloudName)},
		{name: "region", value: cty.StringVal(lb.Region)},
		{name: "type", value: cty.StringVal(lb.Type)},
		{name: "internal", value: cty.BoolVal(lb.Internal)},
		{name: "ip_family", value: cty.StringVal(lb.IPFamily)},
		{name: "algorithm", value: cty.StringVal(lb.Algorithm)},
		{name: "listeners", value: cty.TupleVal(ls)}, // tuple: http(s) listeners have more attributes
		{name: "health_check", value: hc},
		{name: "allowed_source_cidrs", value: stringList(lb.SourceCIDRs)},
		{name: "targets", value: stringList(lb.Targets)},
		{name: "tags", value: stringMap(lb.Tags)},
	}
	if lb.TargetPoolID != "" {
		in = append(in, input{name: "target_pool_id", value: cty.StringVal(lb.TargetPoolID)})
	}
	if len(lb.Certificates) > 0 {
		in = slices.Insert(in, slices.IndexFunc(in, func(i input) bool { return i.name == "listeners" })+1, certificateIDsInput())
	}
	return in
}

// listenerValue is the listener as the module takes it; the http(s)
// attributes only when set, so tcp and udp listeners read as before.
func listenerValue(l lbmodel.Listener) cty.Value {
	attrs := map[string]cty.Value{
		"protocol":       cty.StringVal(l.Protocol),
		"port":           cty.NumberIntVal(int64(l.Port)),
		"target_port":    cty.NumberIntVal(int64(l.TargetPort)),
		"proxy_protocol": cty.BoolVal(l.ProxyProtocol),
	}
	if len(l.Certificates) > 0 {
		attrs["certificates"] = stringList(l.Certificates)
	}
	if len(l.CertificateIDs) > 0 {
		attrs["certificate_ids"] = stringList(l.CertificateIDs)
	}
	setInt(attrs, "redirect_to_https_port", l.HTTPSRedirectPort)
	if s := l.StickySessions; s != nil {
		attrs["sticky_sessions"] = cty.ObjectVal(map[string]cty.Value{
			"cookie_name": cty.StringVal(s.CookieName),
			"ttl_seconds": cty.NumberIntVal(int64(s.TTLSeconds)),
		})
	}
	return cty.ObjectVal(attrs)
}

func stringList(ss []string) cty.Value {
	if len(ss) == 0 {
		return cty.ListValEmpty(cty.String)
	}
	vs := make([]cty.Value, len(ss))
	for i, s := range ss {
		vs[i] = cty.StringVal(s)
	}
	return cty.ListVal(vs)
}

func stringMap(m map[string]string) cty.Value {
	if len(m) == 0 {
		return cty.MapValEmpty(cty.String)
	}
	vs := make(map[string]cty.Value, len(m))
	for k, v := range m {
		vs[k] = cty.StringVal(v)
	}
	return cty.MapVal(vs)
}

func ctyString(s string) cty.Value { return cty.StringVal(s) }
