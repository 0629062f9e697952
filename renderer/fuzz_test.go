package renderer

import (
	"errors"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/servicemodel"
)

// hostile strings: HCL quoting and templating, comments, control and
// non-ASCII characters, invalid UTF-8, a string that is not NFC.
var hostile = []string{
	`"`, `\`, `${x}`, `$${x}`, `%{if}`, `%%{x}`, "a\nb", "\r\n", "# c\n}", "\x00", "\u2028", "e\u0301",
	"\xff", "✓🙂", `$`, `%`, `${`, "}\nresource \"x\" \"y\" {", `\"${"`, "\t",
}

func FuzzRenderLoadBalancer(f *testing.F) {
	f.Add("shop", "web", "uid-1", "", "", "", "ex-west-1", "https://api.example.cloud", "role", "worker", "example://ex-west-1/i-1", "", false, uint16(80))
	for i, h := range hostile {
		f.Add("ns"+h, h+"name", "uid"+h, "", "/p"+h, "", "r"+h, "https://e"+h, "k", h, "example://ex-west-1/i-"+h, "10.0.0.0/8,"+h, i%2 == 0, uint16(i))
		f.Add(h, h, h, h, h, h, h, h, h, h, h, h, i%2 == 1, uint16(65535-i))
	}
	f.Add("a", "b", "c", "lb.name_1", "/healthz", "role in (a,b)", "ex-west-1", "", "role", "a", "example://ex-west-1/i-abc", "10.1.2.3/8", true, uint16(53))

	f.Fuzz(func(t *testing.T, ns, name, uid, lbName, hcPath, selector, region, endpoint, labelKey, labelValue, providerID, ranges string, local bool, p uint16) {
		svc := testService(withPorts(
			port("a", corev1.ProtocolTCP, int32(p), 30080),
			port("b", corev1.ProtocolUDP, 53, 30053),
		))
		svc.Namespace, svc.Name, svc.UID = ns, name, types.UID(uid)
		svc.Annotations = map[string]string{
			string(annotations.LBName):             lbName,
			string(annotations.LBHealthCheckPath):  hcPath,
			string(annotations.LBNodeSelector):     selector,
			string(annotations.LegacySourceRanges): ranges,
		}
		if local {
			svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			svc.Spec.HealthCheckNodePort = 32000
		}
		nodes := append(testNodes(), testNode("n"+labelValue, providerID, labelKey, labelValue))
		cfg := testConfig()
		cfg.Region, cfg.Endpoint = region, endpoint

		m, err := LoadBalancer(annotations.Read(svc), nodes, cfg)
		// Drop rejected annotations and render again, so most inputs reach
		// the output instead of stopping at validation.
		for range len(svc.Annotations) {
			var ae *annotations.Error
			if !errors.As(err, &ae) {
				break
			}
			delete(svc.Annotations, string(ae.Annotation))
			m, err = LoadBalancer(annotations.Read(svc), nodes, cfg)
		}
		if err != nil {
			var ie *lbmodel.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}

		// What the renderer meant to write, from the same inputs.
		full, _ := cfg.withDefaults()
		ann, _ := annotations.Parse(svc.Annotations)
		spec, err := servicemodel.TranslateMember(svc, ann, nodes, full.Service())
		if err != nil {
			t.Fatal(err)
		}
		checkRendered(t, m.Files[MainFile], expectation{
			module: LoadBalancerModuleName, inputs: loadBalancerInputs(spec), source: full.LoadBalancerModule,
			cfg: full, outputs: loadBalancerOutputs,
		})

		// And independently: the user's strings arrive unchanged (as cty
		// strings, which Terraform normalises to NFC).
		nfc := func(s string) string { return cty.StringVal(s).AsString() }
		tags := spec.Tags
		if tags[lbmodel.TagServiceNamespace] != ns || tags[lbmodel.TagServiceName] != name || tags[lbmodel.TagServiceUID] != uid {
			t.Errorf("tags %q lost the Service identity", tags)
		}
		if v := strings.TrimSpace(svc.Annotations[string(annotations.LBName)]); v != "" && spec.CloudName != v {
			t.Errorf("name %q, want %q", spec.CloudName, v)
		}
		if v := strings.TrimSpace(svc.Annotations[string(annotations.LBHealthCheckPath)]); v != "" && nfc(spec.HealthCheck.Path) != nfc(v) {
			t.Errorf("health check path %q, want %q", spec.HealthCheck.Path, v)
		}
	})
}
