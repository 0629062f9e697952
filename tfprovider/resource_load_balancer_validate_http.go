package tfprovider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// validateListenerProtocols checks the API's rules between a listener's
// protocol and its other attributes, and between listeners: certificates
// on https only (and required there), redirects from http to an https
// port of the same load balancer, sticky sessions on http(s) without a
// redirect, and TCP ports shared by tcp, tls, http and https. Unknown
// values skip the checks that need them.
func validateListenerProtocols(ctx context.Context, listeners types.Map, resp *resource.ValidateConfigResponse) {
	if listeners.IsNull() || listeners.IsUnknown() {
		return
	}
	known := map[string]listenerModel{}
	complete := true // every protocol and port known: redirect targets can be checked
	for key, v := range listeners.Elements() {
		l, ok := knownAs[listenerModel](ctx, v)
		if !ok || l.Protocol.IsUnknown() || l.Protocol.IsNull() {
			complete = false
			continue
		}
		if l.Port.IsUnknown() || l.Port.IsNull() {
			complete = false
		}
		known[key] = l
	}
	var httpsPorts []int64
	tcpPorts := map[int64]string{}
	for _, key := range slices.Sorted(maps.Keys(known)) {
		l := known[key]
		proto := l.Protocol.ValueString()
		lp := path.Root("listeners").AtMapKey(key)
		if proto == exampleapi.ProtocolHTTPS && !l.Port.IsUnknown() {
			httpsPorts = append(httpsPorts, l.Port.ValueInt64())
		}
		if proto != exampleapi.ProtocolUDP && !l.Port.IsUnknown() && !l.Port.IsNull() {
			port := l.Port.ValueInt64()
			if other, dup := tcpPorts[port]; dup {
				resp.Diagnostics.AddAttributeError(lp.AtName("port"), "Listener port already in use",
					fmt.Sprintf("Listeners %q and %q both use TCP port %d: tcp, tls, http and https listeners share the "+
						"load balancer's TCP ports (only udp listeners may reuse one).", other, key, port))
			}
			tcpPorts[port] = key
		}
		validateListenerExtras(key, proto, lp, l, resp)
	}
	if !complete {
		return
	}
	for _, key := range slices.Sorted(maps.Keys(known)) {
		l := known[key]
		if l.RedirectToHTTPSPort.IsNull() || l.RedirectToHTTPSPort.IsUnknown() || l.Protocol.ValueString() != exampleapi.ProtocolHTTP {
			continue
		}
		if port := l.RedirectToHTTPSPort.ValueInt64(); !slices.Contains(httpsPorts, port) {
			have := "it has none"
			if len(httpsPorts) > 0 {
				slices.Sort(httpsPorts)
				have = "https ports: " + strings.Trim(fmt.Sprint(httpsPorts), "[]")
			}
			resp.Diagnostics.AddAttributeError(path.Root("listeners").AtMapKey(key).AtName("redirect_to_https_port"),
				"Redirect to a port without an https listener",
				fmt.Sprintf("Listener %q has redirect_to_https_port = %d, which is not the port of an https listener of this "+
					"load balancer (%s). Add an \"https/%d\" listener, or redirect to one of its https ports.", key, port, have, port))
		}
	}
}

// validateListenerExtras checks one listener's certificates, redirect and
// sticky sessions against its protocol.
func validateListenerExtras(key, proto string, lp path.Path, l listenerModel, resp *resource.ValidateConfigResponse) {
	isHTTPS := proto == exampleapi.ProtocolHTTPS
	switch {
	case isHTTPS && l.CertificateIDs.IsNull():
		resp.Diagnostics.AddAttributeError(lp.AtName("certificate_ids"), "Missing certificates",
			fmt.Sprintf("The https listener %q ends TLS at the load balancer, so it needs certificate_ids: the ids of "+
				"example_certificate resources of the load balancer's region (the first is the default certificate).", key))
	case !isHTTPS && !l.CertificateIDs.IsNull() && !l.CertificateIDs.IsUnknown():
		hint := ""
		if proto == exampleapi.ProtocolTLS {
			hint = " A tls listener passes TLS through: its targets hold the certificates."
		}
		resp.Diagnostics.AddAttributeError(lp.AtName("certificate_ids"), "Certificates on a listener that is not https",
			fmt.Sprintf("certificate_ids is only allowed on https listeners; listener %q is %s.%s", key, proto, hint))
	}
	hasRedirect := !l.RedirectToHTTPSPort.IsNull()
	if hasRedirect && proto != exampleapi.ProtocolHTTP {
		resp.Diagnostics.AddAttributeError(lp.AtName("redirect_to_https_port"), "Redirect on a listener that is not http",
			fmt.Sprintf("redirect_to_https_port is only allowed on http listeners; listener %q is %s.", key, proto))
	}
	if l.StickySessions.IsNull() {
		return
	}
	switch {
	case proto != exampleapi.ProtocolHTTP && !isHTTPS:
		resp.Diagnostics.AddAttributeError(lp.AtName("sticky_sessions"), "Sticky sessions need HTTP",
			fmt.Sprintf("sticky_sessions (a cookie) is only allowed on http and https listeners; listener %q is %s.", key, proto))
	case hasRedirect:
		resp.Diagnostics.AddAttributeError(lp.AtName("sticky_sessions"), "Sticky sessions on a redirecting listener",
			fmt.Sprintf("Listener %q has redirect_to_https_port, so it forwards nothing and takes no sticky_sessions: "+
				"set them on the https listener.", key))
	}
}
