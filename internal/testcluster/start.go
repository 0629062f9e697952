package testcluster

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/example/cloud-provider-example/internal/freeport"
)

// attempts bounds retries when a port picked as free is taken before the
// process binds it.
const attempts = 3

func (c *Cluster) startEtcd(ctx context.Context, binDir string) error {
	for i := 1; ; i++ {
		ports, err := freeport.Loopback(2)
		if err != nil {
			return err
		}
		client := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
		peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
		args := []string{
			"--name=testcluster",
			"--data-dir=" + filepath.Join(c.Dir, "etcd"),
			"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=testcluster=" + peer,
			"--unsafe-no-fsync", // the data is thrown away
			"--log-level=warn",
		}
		c.progress("starting etcd on %s", client)
		p, err := startProcess("etcd", filepath.Join(binDir, "etcd"), args, filepath.Join(c.Dir, "etcd.log"))
		if err != nil {
			return err
		}
		c.etcd = p
		err = waitFor(ctx, p, func(ctx context.Context) bool { return etcdHealthy(ctx, client) })
		if errors.Is(err, errPortInUse) && i < attempts {
			continue
		}
		if err != nil {
			return err
		}
		c.etcdURL = client
		return nil
	}
}

func (c *Cluster) startAPIServer(ctx context.Context, binDir string, s *secrets, extra []string) error {
	certDir := filepath.Join(c.Dir, "certs")
	for i := 1; ; i++ {
		ports, err := freeport.Loopback(1)
		if err != nil {
			return err
		}
		args := []string{
			"--etcd-servers=" + c.etcdURL,
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
			fmt.Sprintf("--secure-port=%d", ports[0]),
			"--cert-dir=" + certDir, // self-signed serving cert for localhost/127.0.0.1
			"--token-auth-file=" + s.tokenFile,
			"--client-ca-file=" + s.clientCA,
			"--requestheader-client-ca-file=" + s.clientCA,
			"--requestheader-allowed-names=front-proxy-client",
			"--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + s.saPub,
			"--service-account-signing-key-file=" + s.saKey,
			"--authorization-mode=Node,RBAC",
			"--service-cluster-ip-range=10.96.0.0/16",
			// A node port per LoadBalancer Service: the default 2,768 are
			// fewer than the memory benchmark's 3,000 Services.
			"--service-node-port-range=30000-39999",
			"--allow-privileged=true",
			// The lease reconciler would publish 127.0.0.1 as the endpoint of
			// Service "kubernetes", which validation rejects: log noise only.
			"--endpoint-reconciler-type=none",
			"--profiling=false",
		}
		args = append(args, extra...)
		c.URL = fmt.Sprintf("https://127.0.0.1:%d", ports[0])
		c.Admin, c.Client = nil, nil // from a failed attempt on another port
		c.progress("starting kube-apiserver on %s", c.URL)
		p, err := startProcess("kube-apiserver", filepath.Join(binDir, "kube-apiserver"), args, filepath.Join(c.Dir, "kube-apiserver.log"))
		if err != nil {
			return err
		}
		c.apiserver = p
		err = waitFor(ctx, p, func(ctx context.Context) bool { return c.apiReady(ctx, certDir, s.adminToken) })
		if errors.Is(err, errPortInUse) && i < attempts {
			continue
		}
		return err
	}
}

// apiReady loads the admin client once the serving cert is written, then
// polls /readyz (which includes the RBAC bootstrap policy).
func (c *Cluster) apiReady(ctx context.Context, certDir, token string) bool {
	if c.Admin == nil {
		ca, err := os.ReadFile(filepath.Join(certDir, "apiserver.crt"))
		if err != nil || !wholeCerts(ca) {
			return false
		}
		if err := c.setAdmin(ca, token); err != nil {
			return false
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	body, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err == nil && strings.TrimSpace(string(body)) == "ok"
}

// wholeCerts tells whether data is whole PEM certificates and nothing
// else. The apiserver writes its self-signed ones while the start polls:
// a file read empty or half-written, taken as the CA, would fail every
// request until the start timed out (seen on a loaded machine: ready in
// its log, not ready for 3 minutes here).
func wholeCerts(data []byte) bool {
	n := 0
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return n > 0 && len(bytes.TrimSpace(data)) == 0
		}
		if _, err := x509.ParseCertificate(block.Bytes); block.Type != "CERTIFICATE" || err != nil {
			return false
		}
		n++
	}
}

func (c *Cluster) setAdmin(ca []byte, token string) error {
	cfg := &rest.Config{
		Host:            c.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		QPS:             100, Burst: 200, // tests create objects in bursts
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	path := filepath.Join(c.Dir, "admin.kubeconfig")
	if err := writeKubeconfig(path, c.URL, ca, adminUser, token); err != nil {
		return err
	}
	c.caData, c.Admin, c.Client, c.AdminKubeconfig = ca, cfg, client, path
	return nil
}

// waitFor polls ready until it is true, the process exits or ctx ends.
func waitFor(ctx context.Context, p *process, ready func(context.Context) bool) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if ready(ctx) {
			return nil
		}
		if p.exited() {
			if p.portInUse() {
				return errPortInUse
			}
			return p.exitError()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w; last lines of %s:\n%s", p.name, ctx.Err(), p.logPath, tail(p.logPath, 25))
		case <-p.done:
		case <-tick.C:
		}
	}
}

func etcdHealthy(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
