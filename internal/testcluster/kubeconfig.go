package testcluster

import (
	"context"
	"fmt"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// saTokenTTL outlives any test and a long demo session.
const saTokenTTL = 24 * 60 * 60

// WriteServiceAccountKubeconfig creates (if missing) the namespace and the
// ServiceAccount namespace/name, requests a token for it from the
// TokenRequest API and writes a kubeconfig using that token, so requests
// made with it are authorized by the RBAC bound to the ServiceAccount. It
// returns the file's path (in Dir).
func (c *Cluster) WriteServiceAccountKubeconfig(ctx context.Context, namespace, name string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	sas := c.Client.CoreV1().ServiceAccounts(namespace)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := sas.Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create ServiceAccount %s/%s: %w", namespace, name, err)
	}
	ttl := int64(saTokenTTL)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &ttl}}
	tr, err := sas.CreateToken(ctx, name, tr, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	path := filepath.Join(c.Dir, fmt.Sprintf("sa-%s-%s.kubeconfig", namespace, name))
	user := fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name)
	if err := writeKubeconfig(path, c.URL, c.caData, user, tr.Status.Token); err != nil {
		return "", err
	}
	return path, nil
}

// writeKubeconfig writes a one-context kubeconfig with a bearer token and
// the apiserver's CA embedded (usable from any directory).
func writeKubeconfig(path, url string, ca []byte, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testcluster"] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["testcluster"] = &clientcmdapi.Context{Cluster: "testcluster", AuthInfo: user}
	cfg.CurrentContext = "testcluster"
	return clientcmd.WriteToFile(*cfg, path)
}
