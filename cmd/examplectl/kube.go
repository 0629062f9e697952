package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// defaultCCMNamespace is where the controller (and so its records,
// approvals and unlock requests) runs unless deployed elsewhere.
const defaultCCMNamespace = "example-ccm"

// requestTimeout bounds every API call: a CLI should fail, not hang.
const requestTimeout = 30 * time.Second

// kubeOptions are the flags of the commands that read the cluster.
type kubeOptions struct {
	kubeconfig string
	context    string
	// namespace is the controller's namespace, where the records are; not
	// the Service's (that is -n or ns/name).
	namespace string
	// warnings, if set, hears the API server's warnings (preview).
	warnings rest.WarningHandler
}

func (o *kubeOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the in-cluster ServiceAccount)")
	f.StringVar(&o.context, "context", "", "kubeconfig context (default: the current context)")
	f.StringVar(&o.namespace, "namespace", defaultCCMNamespace, "the controller's namespace, where its plan records are (a Service's namespace is -n or ns/name)")
}

// cluster is a connection to the cluster the controller runs in.
type cluster struct {
	client kubernetes.Interface
	// dynamic creates the review.example.com objects.
	dynamic dynamic.Interface
	store   *records.Store
	// namespace is the controller's (the records').
	namespace string
	// defaultNamespace is the kubeconfig context's, for Services named
	// without one (as kubectl does).
	defaultNamespace string
}

// errNoKubeconfig is what a CLI run outside a cluster without any
// kubeconfig gets, instead of clientcmd's KUBERNETES_MASTER advice.
var errNoKubeconfig = errors.New("no kubeconfig: pass --kubeconfig, set $KUBECONFIG, or create ~/.kube/config (in a pod, the ServiceAccount is used)")

// connect builds the client the way kubectl does: --kubeconfig, else
// $KUBECONFIG, else ~/.kube/config, else in-cluster.
func (o *kubeOptions) connect() (*cluster, error) {
	if o.namespace == "" {
		return nil, errors.New("--namespace is empty: pass the controller's namespace")
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, errNoKubeconfig
		}
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	cfg.Timeout = requestTimeout
	cfg.UserAgent = "examplectl"
	if o.warnings != nil {
		cfg.WarningHandler = o.warnings
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return &cluster{
		client:           client,
		dynamic:          dyn,
		store:            records.NewStore(client, o.namespace, records.DefaultKeep),
		namespace:        o.namespace,
		defaultNamespace: ns,
	}, nil
}

// explain adds what to do to the API errors a reviewer can fix.
func (c *cluster) explain(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy"):
		// Not RBAC: an admission policy (the identity check) said no.
		return fmt.Errorf("%s: %w", what, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: %w (a reviewer needs, in the controller's namespace %s: get and list on configmaps, "+
			"create on %s.%s (approve), %s.%s (unlock) and %s.%s (release); and get on services in their namespaces. "+
			"No access to Secrets is needed, nor given: see docs/examplectl.md#permissions; is --namespace the controller's namespace?)",
			what, err, c.namespace, reviewapi.ResourcePlanApprovals, reviewapi.Group, reviewapi.ResourceStateUnlocks, reviewapi.Group,
			reviewapi.ResourceAddressReleases, reviewapi.Group)
	default:
		return fmt.Errorf("%s: %w", what, err)
	}
}

// whoami is the caller as the API server authenticates them: the username
// and groups an approval must name (the admission policy checks both).
func (c *cluster) whoami(ctx context.Context) (authenticationv1.UserInfo, error) {
	r, err := c.client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, fmt.Errorf("ask the API server who you are (SelfSubjectReview, authentication.k8s.io/v1, which every authenticated user may create): %w", err)
	}
	if r.Status.UserInfo.Username == "" {
		return authenticationv1.UserInfo{}, errors.New("the API server did not say who you are (SelfSubjectReview returned no username): are you authenticated?")
	}
	return r.Status.UserInfo, nil
}

// listingCmd completes cmd, a command that lists from the cluster
// (status, addresses): no arguments, its connection and -o flags (wide
// allowed or not), and a RunE that checks the -o format before it
// connects and hands the cluster to list.
func listingCmd(cmd *cobra.Command, wide bool, list func(ctx context.Context, c *cluster, output string, stdout, stderr io.Writer) error) *cobra.Command {
	var o kubeOptions
	var output string
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(output, wide); err != nil {
			return err
		}
		c, err := o.connect()
		if err != nil {
			return err
		}
		return list(cmd.Context(), c, output, cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	o.addFlags(cmd)
	outputFlag(cmd, &output, wide)
	return cmd
}
