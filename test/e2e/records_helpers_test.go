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

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/records"
)

// recordObjects names the ConfigMaps and Secrets of the record of Service
// default/svc.
func (e *env) recordObjects(t testing.TB, svc string) []string {
	var out []string
	cms, err := e.kube.CoreV1().ConfigMaps(namespace).List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	for _, cm := range cms.Items {
		if isRecordOf(cm.ObjectMeta, "default", svc) {
			out = append(out, "ConfigMap "+cm.Name)
		}
	}
	ss, err := e.kube.CoreV1().Secrets(namespace).List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	for _, s := range ss.Items {
		if isRecordOf(s.ObjectMeta, "default", svc) {
			out = append(out, "Secret "+s.Name)
		}
	}
	return out
}

func isRecordOf(m metav1.ObjectMeta, ns, name string) bool {
	return m.Annotations[records.AnnotationObjectNamespace] == ns && m.Annotations[records.AnnotationObjectName] == name &&
		m.Labels[records.LabelManagedBy] == records.ManagedBy
}

// record returns the record of Service default/svc as JSON, or fails.
func (e *env) record(t testing.TB, svc string) string {
	rec, ok := e.findRecord(t, svc)
	if !ok {
		t.Fatalf("no record for Service %s", svc)
	}
	return rec
}

// findRecord returns the record of Service default/svc as JSON.
func (e *env) findRecord(t testing.TB, svc string) (string, bool) {
	r := e.recordOf(t, "default", svc)
	if r == nil {
		return "", false
	}
	data, err := json.Marshal(r)
	testkit.Must(t, err)
	return string(data), true
}

// recordOf reads the record of Service ns/name (nil when there is none).
func (e *env) recordOf(t testing.TB, ns, name string) *records.Record {
	all, err := records.NewStore(e.kube, namespace, 0).List(testkit.Context(t))
	testkit.Must(t, err)
	for _, r := range all {
		if r.Object.Namespace == ns && r.Object.Name == name {
			return r
		}
	}
	return nil
}

// checkAudit fails unless the audit log holds an entry of every action.
func (e *env) checkAudit(t testing.TB, actions ...string) {
	data, err := os.ReadFile(e.auditLog)
	testkit.Must(t, err)
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
