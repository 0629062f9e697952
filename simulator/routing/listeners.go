package routing

import (
	"net"
	"slices"
	"strconv"

	"github.com/example/cloud-provider-example/exampleapi"
)

// IsHTTP tells whether l forwards HTTP requests (L7).
func IsHTTP(l exampleapi.Listener) bool {
	return l.Protocol == exampleapi.ProtocolHTTP || l.Protocol == exampleapi.ProtocolHTTPS
}

// ListenerOn is the listener of ls on port that protocol names: the one
// of that protocol; for "", the port's listener of the TCP ports, else
// its udp one. (A port may have two listeners, a udp one and one of the
// TCP ports.)
func ListenerOn(ls []exampleapi.Listener, port int, protocol string) (exampleapi.Listener, bool) {
	i := slices.IndexFunc(ls, func(l exampleapi.Listener) bool {
		return l.Port == port && (l.Protocol == protocol || protocol == "" && l.Protocol != exampleapi.ProtocolUDP)
	})
	if i < 0 && protocol == "" {
		i = slices.IndexFunc(ls, func(l exampleapi.Listener) bool { return l.Port == port })
	}
	if i < 0 {
		return exampleapi.Listener{}, false
	}
	return ls[i], true
}

func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// location is a redirect's URL; the port is left out when it is the
// scheme's default.
func location(scheme, host string, port int, path string) string {
	if port == defaultPort(scheme) {
		return scheme + "://" + host + path
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + path
}
