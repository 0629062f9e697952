package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1alpha2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/gatewaycontroller"
	"github.com/example/cloud-provider-example/internal/gatewaycrds"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
)

var update = flag.Bool("update", false, "rewrite docs/gateway-conformance/ from this run")

// conformanceClass is the GatewayClass the suite runs against (its flag's
// default name).
const conformanceClass = "gateway-conformance"

// conformanceProfiles are the suite's profiles run here, whole.
var conformanceProfiles = []suite.ConformanceProfile{suite.GatewayHTTPConformanceProfile, suite.GatewayTLSConformanceProfile,
	suite.GatewayTCPConformanceProfile, suite.GatewayUDPConformanceProfile, suite.GatewayGRPCConformanceProfile}

// notRunnable are the tests of those profiles, of features the
// GatewayClass claims, that cannot run here, and why: they are listed by
// profile in docs/gateway-conformance/not-run.yaml.
var notRunnable = map[string]string{}

// The upstream Gateway API conformance suite (sigs.k8s.io/gateway-api/
// conformance, profiles GATEWAY-HTTP, GATEWAY-TLS, GATEWAY-TCP,
// GATEWAY-UDP and GATEWAY-GRPC, whole) against the real controller on a
// real API server, with kube-controller-manager, kube-scheduler and kwok
// making the suite's Deployments Ready on a fake node, and traffic: the
// load balancers serve their addresses (the simulator's data plane) and
// forward to pods whose processes answer (internal/clustertraffic:
// example-echo for echo-basic, in its gRPC mode too; CoreDNS for
// coredns). Its Setup (base Gateways Accepted and Programmed
// through terraform, pods Ready) and every test of those profiles whose
// features the class claims, chosen with the suite's own test list so
// that nothing shows as a skip. Its report and the list of tests not run
// (with why) are kept in docs/gateway-conformance/ (-update rewrites them;
// a run that differs fails).
func TestGatewayConformance(t *testing.T) {
	testsize.SkipShort(t, "the upstream suite's five profiles, with kube-controller-manager, kube-scheduler, kwok and traffic")
	t.Parallel()
	// The experimental channel's CRDs: an HTTPRoute rule's retry is
	// experimental in v1.6.3, and the standard CRD drops it.
	e := newEnv(t, options{gatewayAPI: true, crdChannel: gatewaycrds.Experimental, traffic: true})
	e.addNode("node-a", "ex-west-1a") // kwok plays its kubelet
	e.waitNodesInitialised(1)
	ctx := testkit.Context(t)
	admin, err := gwclient.NewForConfig(e.cluster.Admin)
	testkit.Must(t, err)
	_, err = admin.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: conformanceClass},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewaycontroller.ControllerName}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	// The suite reads the features it tests from the class's status.
	testkit.Eventually(t, time.Minute, "the class accepted with its features", func() error {
		gc, err := admin.GatewayV1().GatewayClasses().Get(ctx, conformanceClass, metav1.GetOptions{})
		if err != nil || !meta.IsStatusConditionTrue(gc.Status.Conditions, "Accepted") || len(gc.Status.SupportedFeatures) == 0 {
			return fmt.Errorf("%+v, %v", gc.Status, err)
		}
		return nil
	})
	// The suite's certificates are Secrets of its namespaces: the
	// controller reads TLS Secrets only where a namespace allows it.
	for _, ns := range []string{suite.InfrastructureNamespace, suite.AppBackendNamespace, suite.WebBackendNamespace} {
		_, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		testkit.Must(t, err)
		e.allowTLSSecrets(t, ns)
	}
	// GatewayStaticAddresses: a reserved address of the suite's
	// namespace, kept by a Service there; an IP outside the region's
	// pools cannot be one.
	ipAddress := gatewayv1.IPAddressType
	usable := e.keptAddress(t, suite.InfrastructureNamespace)

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme,
		gatewayv1.Install, gatewayv1beta1.Install, gatewayv1alpha2.Install} {
		testkit.Must(t, add(scheme))
	}
	opts := client.Options{Scheme: scheme}
	c, err := client.New(e.cluster.Admin, opts)
	testkit.Must(t, err)
	s, err := suite.NewConformanceTestSuite(suite.ConformanceOptions{
		ConfigurableOptions: suite.ConfigurableOptions{
			GatewayClassName:     conformanceClass,
			ConformanceProfiles:  profileNames(),
			CleanupTestResources: true,
			// One controller worker builds every Gateway through terraform:
			// the suite's parallel tests would only queue behind each other.
			DisableParallelTests: true,
			Implementation: confv1.Implementation{Organization: "example", Project: "cloud-provider-example",
				URL: "https://github.com/example/cloud-provider-example", Version: "main",
				Contact: []string{"@example/cloud-provider-example-maintainers"}},
			Mode:                     "default",
			UsableNetworkAddresses:   []gatewayv1.GatewaySpecAddress{{Type: &ipAddress, Value: usable.IP}},
			UnusableNetworkAddresses: []gatewayv1.GatewaySpecAddress{{Type: &ipAddress, Value: "192.0.2.1"}},
		},
		Client: c, ClientOptions: opts, Clientset: e.kube, RestConfig: e.cluster.Admin,
		ManifestFS: []fs.FS{conformanceManifests(t)},
	})
	testkit.Must(t, err)
	run, notRun := conformanceTests(t, s.SupportedFeatures)
	// The suite says it is running until Run's own cleanup: the report
	// is read in a cleanup registered before it, which runs after.
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		report, err := s.Report()
		testkit.Must(t, err)
		report.Date = "" // the only field that differs between two runs
		// The suite lists the profiles from a map: in no set order.
		slices.SortFunc(report.ProfileReports, func(a, b confv1.ProfileReport) int { return strings.Compare(a.Name, b.Name) })
		got, err := yaml.Marshal(report)
		testkit.Must(t, err)
		gotNotRun, err := yaml.Marshal(notRun)
		testkit.Must(t, err)
		checkDoc(t, "report.yaml", got)
		checkDoc(t, "not-run.yaml", gotNotRun)
	})
	s.Setup(t, run)
	testkit.Must(t, s.Run(t, run))
}

// conformanceTests are the suite's tests of conformanceProfiles whose
// features the class claims (as the suite runs them: the others it
// reports as not supported), but notRunnable; and by profile, the
// tests not run of those features, and why.
func conformanceTests(t *testing.T, claimed suite.FeaturesSet) (run []suite.ConformanceTest, notRun []notRunTests) {
	t.Helper()
	inProfile := func(p suite.ConformanceProfile, ct suite.ConformanceTest) bool {
		for _, f := range ct.Features {
			if !p.CoreFeatures.Has(f) && !p.ExtendedFeatures.Has(f) {
				return false
			}
		}
		return true
	}
	byProfile := map[suite.ConformanceProfileName]map[string][]string{}
	notRun = []notRunTests{} // "[]" in the kept file, not "null"
	for _, ct := range tests.ConformanceTests {
		if !claimed.HasAll(ct.Features...) {
			continue
		}
		in := false
		for _, p := range conformanceProfiles {
			if !inProfile(p, ct) {
				continue
			}
			in = true
			if reason, ok := notRunnable[ct.ShortName]; ok {
				if byProfile[p.Name] == nil {
					byProfile[p.Name] = map[string][]string{}
				}
				byProfile[p.Name][reason] = append(byProfile[p.Name][reason], ct.ShortName)
			}
		}
		if _, skip := notRunnable[ct.ShortName]; in && !skip {
			run = append(run, ct)
		}
	}
	for _, p := range conformanceProfiles {
		for _, reason := range slices.Sorted(maps.Keys(byProfile[p.Name])) {
			names := byProfile[p.Name][reason]
			slices.Sort(names)
			notRun = append(notRun, notRunTests{Profile: string(p.Name), Reason: reason, Tests: names})
		}
	}
	t.Logf("running %d tests of %d profiles, every one the class's features select but %d (docs/gateway-conformance/not-run.yaml)",
		len(run), len(conformanceProfiles), len(notRunnable))
	return run, notRun
}

// profileNames are conformanceProfiles' names.
func profileNames() (out []suite.ConformanceProfileName) {
	for _, p := range conformanceProfiles {
		out = append(out, p.Name)
	}
	return out
}

// notRunTests are a profile's tests not run, and why.
type notRunTests struct {
	Profile string   `json:"profile"`
	Reason  string   `json:"reason"`
	Tests   []string `json:"tests"`
}

// conformanceManifests are the suite's manifests (base/, tests/), read
// from the module cache: the package that embeds them also registers
// about 30 command-line flags.
func conformanceManifests(t *testing.T) fs.FS {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api/conformance").Output()
	if err != nil {
		t.Fatalf("locate sigs.k8s.io/gateway-api/conformance in the module cache: %v", err)
	}
	return os.DirFS(strings.TrimSpace(string(out)))
}

// checkDoc compares got with docs/gateway-conformance/name, or rewrites
// it with -update.
func checkDoc(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "..", "docs", "gateway-conformance", name)
	if *update {
		testkit.Must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		testkit.Must(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	testkit.Must(t, err)
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from this run (go test ./test/e2e -run '^TestGatewayConformance$' -update rewrites it):\n--- this run\n%s", path, got)
	}
}
