//go:build ignore

// CoreDNS with the plugins the Gateway API conformance suite's Corefile
// names (base/manifests.yaml: errors, log, forward, whoami), built by
// hack/coredns.sh in a module of its own. Upstream's own way to choose
// plugins at compile time (coredns.io, "Compile Time Enabling or
// Disabling Plugins"): its full build compiles about 60 plugins and their
// cloud SDKs, for a server the UDPRoute tests ask one whoami answer of.
// Its ignore build tag keeps it out of this repository's packages and
// go.mod (hack/gotool.sh drops the tag).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/whoami"
)

// directives are those plugins in upstream's order
// (core/dnsserver/zdirectives.go).
var directives = []string{"errors", "log", "forward", "whoami"}

func init() { dnsserver.Directives = directives }

func main() { coremain.Run() }
