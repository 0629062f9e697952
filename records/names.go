package records

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels and annotations of every object of a record. To read them:
//
//	kubectl -n kube-system get cm -l app.kubernetes.io/managed-by=example-cloud-controller-manager,'!records.example.com/chunk' \
//	  -o custom-columns='NAME:.metadata.name,KIND:.metadata.annotations.records\.example\.com/object-kind,NAMESPACE:.metadata.annotations.records\.example\.com/object-namespace,OBJECT:.metadata.annotations.records\.example\.com/object-name'
//	kubectl -n kube-system get cm,secret -l records.example.com/workspace=<key>
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "example-cloud-controller-manager"
	// LabelWorkspace is the workspace key, or for keys longer than a label
	// value may be (63) its first 54 characters, a dash and 8 hex digits of
	// its hash; AnnotationWorkspace always holds the key itself.
	LabelWorkspace = "records.example.com/workspace"
	// LabelChunk numbers the extra objects a large record spills into.
	LabelChunk = "records.example.com/chunk"

	AnnotationWorkspace       = "records.example.com/workspace"
	AnnotationObjectKind      = "records.example.com/object-kind"
	AnnotationObjectNamespace = "records.example.com/object-namespace"
	AnnotationObjectName      = "records.example.com/object-name"
	// AnnotationGeneration counts the commits of a record (index ConfigMap).
	AnnotationGeneration = "records.example.com/generation"
	// AnnotationSpilled lists, on the index ConfigMap, the pieces in chunk
	// ConfigMaps of every item that did not fit in it (see layout).
	AnnotationSpilled = "records.example.com/spilled"
	// AnnotationAdded maps each data key of a chunk ConfigMap or a Secret
	// to the generation that wrote it, for garbage collection (see gc).
	AnnotationAdded = "records.example.com/added"
)

// RecordKey is the index ConfigMap's key holding the Record as JSON.
const RecordKey = "record.json"

// textSuffix ends the Secret key of a plan's gzipped text.
const textSuffix = ".txt.gz"

// Defaults of NewStore.
const (
	DefaultKeep = 10
	// DefaultChunkBudget bounds the data of one object, under the 1 MiB the
	// apiserver accepts for a ConfigMap's or Secret's data, leaving room for
	// keys, annotations and the rest of the object.
	DefaultChunkBudget = 900 << 10
	// minChunkBudget keeps a piece big enough to be more than its key.
	minChunkBudget = 1 << 10
)

const namePrefix = "ccm-plans-"

// Workspace keys are state keys (state.Key): [a-z0-9-], at most 80, which
// also makes ccm-plans-<key>[-N] a valid object name.
var workspaceRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,78}[a-z0-9])?$`)

func validWorkspace(ws string) error {
	if !workspaceRE.MatchString(ws) {
		return fmt.Errorf("records: invalid workspace key %q: want 1-80 characters of [a-z0-9-], starting and ending with a letter or digit", ws)
	}
	return nil
}

// objectName names a record's index object (chunk 0) or chunk n.
func objectName(ws string, n int) string {
	if n == 0 {
		return namePrefix + ws
	}
	return namePrefix + ws + "-" + strconv.Itoa(n)
}

// workspaceLabel is ws as a label value (at most 63 characters).
func workspaceLabel(ws string) string {
	if len(ws) <= validation.LabelValueMaxLength {
		return ws
	}
	sum := sha256.Sum256([]byte(ws))
	return ws[:54] + "-" + hex.EncodeToString(sum[:4])
}

func workspaceSelector(ws string) string {
	return LabelManagedBy + "=" + ManagedBy + "," + LabelWorkspace + "=" + workspaceLabel(ws)
}

// allSelector selects every object of every record.
const allSelector = LabelManagedBy + "=" + ManagedBy + "," + LabelWorkspace

// chunkOf tells which chunk of workspace ws o is: 0 for the index, -1 for
// an object that is not ws's (another workspace's, or misnamed).
func chunkOf(o *obj, ws string) int {
	if o.annotations[AnnotationWorkspace] != ws {
		return -1
	}
	v, ok := o.labels[LabelChunk]
	if !ok {
		if o.name == objectName(ws, 0) {
			return 0
		}
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || o.name != objectName(ws, n) {
		return -1
	}
	return n
}

// setMeta sets the labels and annotations the store owns on o, keeping
// any others (someone's kubectl annotate).
func setMeta(o *obj, ws string, n int, ref ObjectRef) {
	if o.labels == nil {
		o.labels = map[string]string{}
	}
	if o.annotations == nil {
		o.annotations = map[string]string{}
	}
	o.labels[LabelManagedBy] = ManagedBy
	o.labels[LabelWorkspace] = workspaceLabel(ws)
	if n > 0 {
		o.labels[LabelChunk] = strconv.Itoa(n)
	} else {
		delete(o.labels, LabelChunk)
	}
	o.annotations[AnnotationWorkspace] = ws
	setOrDelete(o.annotations, AnnotationObjectKind, ref.Kind)
	setOrDelete(o.annotations, AnnotationObjectNamespace, ref.Namespace)
	setOrDelete(o.annotations, AnnotationObjectName, ref.Name)
}

func setOrDelete(m map[string]string, k, v string) {
	if v == "" {
		delete(m, k)
		return
	}
	m[k] = v
}

// textKey is the Secret key of a plan's text.
func textKey(planID string) (string, error) {
	k := planID + textSuffix
	if planID == "" || strings.HasPrefix(planID, ".") || len(validation.IsConfigMapKey(k+".999-of-999")) > 0 {
		return "", fmt.Errorf("records: plan id %q cannot name a Secret key", planID)
	}
	return k, nil
}

func validFileName(name string) error {
	if name == RecordKey {
		return fmt.Errorf("records: file name %q is reserved", name)
	}
	// Room for the ".<16 hex>" of a spilled piece.
	if errs := validation.IsConfigMapKey(name + ".0123456789abcdef"); len(errs) > 0 {
		return fmt.Errorf("records: file name %q: %s", name, strings.Join(errs, "; "))
	}
	return nil
}
