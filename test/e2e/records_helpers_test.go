package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// recordObjects names the ConfigMaps and Secrets of a Service's record.
func (e *env) recordObjects(t testing.TB, svc string) []string {
	prefix := "ccm-plans-e2e-service-default-" + svc + "-"
	var out []string
	cms, err := e.kube.CoreV1().ConfigMaps(namespace).List(ctx(t), metav1.ListOptions{})
	must(t, err)
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, prefix) {
			out = append(out, "ConfigMap "+cm.Name)
		}
	}
	ss, err := e.kube.CoreV1().Secrets(namespace).List(ctx(t), metav1.ListOptions{})
	must(t, err)
	for _, s := range ss.Items {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, "Secret "+s.Name)
		}
	}
	return out
}

// record returns the Service's record.json, or fails the test.
func (e *env) record(t testing.TB, svc string) string {
	rec, ok := e.findRecord(t, svc)
	if !ok {
		t.Fatalf("no record for Service %s", svc)
	}
	return rec
}

// findRecord returns the Service's record.json (from its index ConfigMap).
func (e *env) findRecord(t testing.TB, svc string) (string, bool) {
	prefix := "ccm-plans-e2e-service-default-" + svc + "-"
	cms, err := e.kube.CoreV1().ConfigMaps(namespace).List(ctx(t), metav1.ListOptions{})
	must(t, err)
	for _, cm := range cms.Items {
		if _, chunk := cm.Labels["records.example.com/chunk"]; chunk {
			continue
		}
		if strings.HasPrefix(cm.Name, prefix) && cm.Data["record.json"] != "" {
			return cm.Data["record.json"], true
		}
	}
	return "", false
}

// checkAudit fails unless the audit log holds an entry of every action.
func (e *env) checkAudit(t testing.TB, actions ...string) {
	data, err := os.ReadFile(e.auditLog)
	must(t, err)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var entry struct {
			Action string `json:"action"`
		}
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("audit line is not JSON: %q", line)
		}
		seen[entry.Action] = true
	}
	for _, a := range actions {
		if !seen[a] {
			t.Errorf("audit log has no %q entry:\n%s", a, data)
		}
	}
}

// decodeGzipValues inflates gzipped Secret values so a scan sees the text.
func decodeGzipValues(data map[string][]byte) string {
	var b strings.Builder
	for _, v := range data {
		if r, err := gzip.NewReader(bytes.NewReader(v)); err == nil {
			text, _ := io.ReadAll(r)
			b.Write(text)
		}
	}
	return b.String()
}
