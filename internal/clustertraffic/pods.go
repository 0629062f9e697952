package clustertraffic

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/example/cloud-provider-example/internal/netns"
	"github.com/example/cloud-provider-example/internal/podfs"
)

// EchoImage is the image the tests' pods name for example-echo; an image
// of the conformance suite's echo-basic runs it too.
const EchoImage = "example.com/echo:test"

// echoPort is where example-echo serves HTTP unless HTTP_PORT says.
const echoPort = "3000"

// command is what the runner runs for a container of image: example-echo
// (ours, the suite's echo-basic), or through it the binary for that image
// (CoreDNS's); "" for an image it does not know.
func (r *podRunner) command(image string) string {
	switch {
	case image == EchoImage || strings.Contains(image, "/echo-basic"):
		return r.bin
	case r.coredns != "" && strings.Contains(image, "/coredns/coredns"):
		return r.coredns
	}
	return ""
}

// podRunner starts and stops the pods' processes.
type podRunner struct {
	client  kubernetes.Interface
	bin     string
	coredns string
	logDir  string
	log     *slog.Logger
	pods    corelisters.PodLister
	queue   workqueue.TypedRateLimitingInterface[string]
	mu      sync.Mutex
	running map[string]*podProcess // by namespace/name
}

// podProcess is one pod's process.
type podProcess struct {
	uid    types.UID
	cmd    *exec.Cmd
	exited chan struct{}
}

func newPodRunner(o Options, pods corelisters.PodLister) *podRunner {
	return &podRunner{client: o.Client, bin: o.EchoBinary, coredns: o.CoreDNS, logDir: o.LogDir, log: o.Log, pods: pods,
		queue:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		running: map[string]*podProcess{}}
}

func (r *podRunner) onPod(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		r.queue.Add(key)
	}
}

func (r *podRunner) onDelete(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		r.queue.Add(key)
	}
}

// run syncs pods until ctx ends, two at a time: a pod waits for its
// process to listen.
func (r *podRunner) run(ctx context.Context) {
	go func() { <-ctx.Done(); r.queue.ShutDown() }()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				key, quit := r.queue.Get()
				if quit {
					return
				}
				if err := r.sync(ctx, key); err != nil && ctx.Err() == nil {
					r.log.Info("pod runner: retrying", "pod", key, "err", err)
					r.queue.AddRateLimited(key)
				} else {
					r.queue.Forget(key)
				}
				r.queue.Done(key)
			}
		})
	}
	wg.Wait()
}

// sync runs pod key's process while the pod lives, and marks it
// listening once it does. A terminating pod's process serves on until
// the pod is gone (kwok deletes it within its grace period), as a pod
// whose preStop hook waits for its load balancers to let it go does.
func (r *podRunner) sync(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pod, err := r.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		r.stop(key)
		return nil
	}
	if err == nil && pod.DeletionTimestamp != nil {
		return nil
	}
	if err != nil || pod.Status.PodIP == "" {
		return err
	}
	c, ok := r.container(pod)
	if !ok {
		return r.markListening(ctx, pod) // nothing to run: Ready as kwok would make it
	}
	p, err := r.ensure(ctx, key, pod, c)
	if err != nil {
		return err
	}
	if pod.Annotations[ListeningAnnotation] == "true" {
		return nil
	}
	network, addr := r.listensOn(pod.Status.PodIP, c, envOf(pod, c))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-p.exited:
			return fmt.Errorf("pod %s: its process exited (see %s)", key, r.logFile(key))
		default:
		}
		if answers(network, addr) {
			return r.markListening(ctx, pod)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pod %s: nothing answers on %s %s", key, network, addr)
		}
	}
}

// listensOn is where the process of container c of a pod at ip, with
// env, serves: CoreDNS its port 53 (TCP as well as UDP); echo-basic in its
// TCP or UDP mode its port of that protocol (upstream's defaults), else
// its HTTP port.
func (r *podRunner) listensOn(ip string, c corev1.Container, env map[string]string) (network, addr string) {
	port := func(name, def string) string {
		if v := env[name]; v != "" {
			return v
		}
		return def
	}
	switch {
	case r.command(c.Image) != r.bin:
		return "tcp", net.JoinHostPort(ip, "53")
	case env["TCP_ECHO_SERVER"] != "":
		return "tcp", net.JoinHostPort(ip, port("TCP_PORT", "3000"))
	case env["UDP_ECHO_SERVER"] != "":
		return "udp", net.JoinHostPort(ip, port("UDP_PORT", "8080"))
	}
	return "tcp", net.JoinHostPort(ip, env["HTTP_PORT"])
}

// answers tells whether something serves addr: a TCP connection is
// accepted; a UDP datagram gets one back (an echo server answers every
// datagram).
func answers(network, addr string) bool {
	conn, err := net.DialTimeout(network, addr, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	if network != "udp" {
		return true
	}
	if _, err := conn.Write([]byte("listening?")); err != nil {
		return false
	}
	_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	_, err = conn.Read(make([]byte, 2048))
	return err == nil
}

// ensure starts pod's process unless it runs; a pod of the same name but
// another uid has its old process stopped first.
func (r *podRunner) ensure(ctx context.Context, key string, pod *corev1.Pod, c corev1.Container) (*podProcess, error) {
	r.mu.Lock()
	p := r.running[key]
	r.mu.Unlock()
	if p != nil && p.uid == pod.UID && !done(p.exited) {
		return p, nil
	}
	if p != nil {
		// Another pod of that name, or its process exited: a kubelet
		// restarts the container.
		r.stop(key)
		<-p.exited
	}
	dir := filepath.Join(r.logDir, strings.ReplaceAll(key, "/", "_")+"-"+string(pod.UID))
	mounts, err := r.volumes(ctx, pod, c, dir)
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", key, err)
	}
	out, err := os.OpenFile(r.logFile(key), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(r.bin)
	if bin := r.command(c.Image); bin != r.bin {
		cmd = exec.Command(r.bin, c.Args...)
		cmd.Env = append(cmd.Env, podfs.Exec+"="+bin)
	}
	for k, v := range envOf(pod, c) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, podfs.Env+"="+mounts, podfs.Scratch+"="+filepath.Join(dir, "scratch"))
	cmd.Stdout, cmd.Stderr = out, out
	// Network and mount namespaces of its own: joined at the pod's IP,
	// the process binds every address there; it sees its volumes where
	// its container would (podfs), the host's files beside them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWNS}
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("pod %s: %w", key, err)
	}
	ip, err := netip.ParseAddr(pod.Status.PodIP)
	if err == nil {
		err = netns.Join(cmd.Process.Pid, ip, string(pod.UID))
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = out.Close()
		return nil, fmt.Errorf("pod %s: its network: %w", key, err)
	}
	p = &podProcess{uid: pod.UID, cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = out.Close()
		close(p.exited)
		r.queue.AddRateLimited(key) // a process that exited is started again
	}()
	r.mu.Lock()
	r.running[key] = p
	r.mu.Unlock()
	r.log.Info("pod runner: started", "pod", key, "ip", pod.Status.PodIP, "pid", cmd.Process.Pid)
	return p, nil
}

func (r *podRunner) logFile(key string) string {
	return filepath.Join(r.logDir, strings.ReplaceAll(key, "/", "_")+".log")
}

// stop ends pod key's process: SIGTERM, then SIGKILL after 5 s.
func (r *podRunner) stop(key string) {
	r.mu.Lock()
	p := r.running[key]
	delete(r.running, key)
	r.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	go func() {
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
		}
	}()
}

// stopAll ends every process and waits for them.
func (r *podRunner) stopAll() {
	r.mu.Lock()
	all := r.running
	r.running = map[string]*podProcess{}
	r.mu.Unlock()
	for _, p := range all {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// markListening sets the annotation kwok's ready stage waits for.
func (r *podRunner) markListening(ctx context.Context, pod *corev1.Pod) error {
	if pod.Annotations[ListeningAnnotation] == "true" {
		return nil
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, ListeningAnnotation)
	_, err := r.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// container is pod's container the runner runs, if any.
func (r *podRunner) container(pod *corev1.Pod) (corev1.Container, bool) {
	for _, c := range pod.Spec.Containers {
		if r.command(c.Image) != "" {
			return c, true
		}
	}
	return corev1.Container{}, false
}

// envOf is c's environment in pod, as the kubelet gives it: its values
// and the field references a pod can read of itself; POD_IP is always
// set, HTTP_PORT defaults to echo-basic's.
func envOf(pod *corev1.Pod, c corev1.Container) map[string]string {
	fields := map[string]string{
		"metadata.name": pod.Name, "metadata.namespace": pod.Namespace, "metadata.uid": string(pod.UID),
		"spec.nodeName": pod.Spec.NodeName, "status.podIP": pod.Status.PodIP, "status.hostIP": pod.Status.HostIP,
	}
	env := map[string]string{"POD_NAME": pod.Name, "NAMESPACE": pod.Namespace, "HTTP_PORT": echoPort}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil:
			if v, ok := fields[e.ValueFrom.FieldRef.FieldPath]; ok {
				env[e.Name] = v
			}
		}
	}
	env["POD_IP"] = pod.Status.PodIP
	return env
}

// done tells whether ch is closed.
func done(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
