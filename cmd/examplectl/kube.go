package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/example/cloud-provider-example/records"
)

// defaultCCMNamespace is where the controller (and so its records) runs
// unless deployed elsewhere.
const defaultCCMNamespace = "kube-system"

// requestTimeout bounds every API call: a CLI should fail, not hang.
const requestTimeout = 30 * time.Second

// kubeOptions are the flags of the commands that read the cluster.
type kubeOptions struct {
	kubeconfig string
	context    string
	// namespace is the controller's namespace, where the records are; not
	// the Service's (that is -n or ns/name).
	namespace string
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
	store  *records.Store
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
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return &cluster{
		client:           client,
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
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: %w (examplectl needs get/list on ConfigMaps and get on Secrets in namespace %s, get/patch on Services)", what, err, c.namespace)
	default:
		return fmt.Errorf("%s: %w", what, err)
	}
}
