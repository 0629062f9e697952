package clustertraffic

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/internal/podfs"
)

// volumes writes the files of c's Secret, ConfigMap and emptyDir volume
// mounts under dir, as a kubelet would, and says where c sees each
// (podfs's Env). Secrets and ConfigMaps are read-only, as in Kubernetes.
func (r *podRunner) volumes(ctx context.Context, pod *corev1.Pod, c corev1.Container, dir string) (string, error) {
	var mounts []podfs.Mount
	for _, vm := range c.VolumeMounts {
		var v *corev1.Volume
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == vm.Name {
				v = &pod.Spec.Volumes[i]
			}
		}
		if v == nil || vm.SubPath != "" {
			return "", fmt.Errorf("volume mount %s: no such volume, or a subPath (not supported here)", vm.Name)
		}
		if v.Secret == nil && v.ConfigMap == nil && v.EmptyDir == nil {
			// The service account token's projected volume, and the
			// kinds no test needs yet: left out, and said.
			r.log.Info("pod runner: volume not mounted (only Secret, ConfigMap and emptyDir are)", "pod", pod.Namespace+"/"+pod.Name, "volume", v.Name)
			continue
		}
		files, readOnly, err := r.volumeFiles(ctx, pod.Namespace, v)
		if err != nil {
			return "", fmt.Errorf("volume %s: %w", v.Name, err)
		}
		src := filepath.Join(dir, "volumes", v.Name)
		if err := os.MkdirAll(src, 0o755); err != nil {
			return "", err
		}
		for name, data := range files {
			p := filepath.Join(src, filepath.Clean("/"+name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return "", err
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return "", err
			}
		}
		mounts = append(mounts, podfs.Mount{Source: src, Target: vm.MountPath, ReadOnly: readOnly || vm.ReadOnly})
	}
	return podfs.Encode(mounts)
}

// volumeFiles are the files of volume v of a pod in ns, by path.
func (r *podRunner) volumeFiles(ctx context.Context, ns string, v *corev1.Volume) (map[string][]byte, bool, error) {
	switch {
	case v.Secret != nil:
		s, err := r.client.CoreV1().Secrets(ns).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
		if err != nil {
			return nil, true, err
		}
		return pick(s.Data, v.Secret.Items), true, nil
	case v.ConfigMap != nil:
		cm, err := r.client.CoreV1().ConfigMaps(ns).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
		if err != nil {
			return nil, true, err
		}
		data := map[string][]byte{}
		for k, s := range cm.Data {
			data[k] = []byte(s)
		}
		for k, b := range cm.BinaryData {
			data[k] = b
		}
		return pick(data, v.ConfigMap.Items), true, nil
	}
	return nil, false, nil // emptyDir
}

// pick is data by path: every key, or the items' keys at their paths.
func pick(data map[string][]byte, items []corev1.KeyToPath) map[string][]byte {
	if len(items) == 0 {
		return data
	}
	out := map[string][]byte{}
	for _, it := range items {
		if b, ok := data[it.Key]; ok {
			out[it.Path] = b
		}
	}
	return out
}
