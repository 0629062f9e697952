package records

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/example/cloud-provider-example/objectref"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The naming contract of a record's objects, in the controller's
// namespace (default example-ccm). For workspace <ws>:
//
//	ConfigMap ccm-plans-<ws>            the index: record.json and the rendered files
//	ConfigMap ccm-plans-<ws>-N          pieces of files too large for the index (N >= 1)
//	ConfigMap ccm-plans-<ws>-text[-N]   each plan's text, gzipped (binaryData <plan id>.txt.gz)
//	Secret    ccm-plans-<ws>[-N]        saved plan files awaiting approval (<plan id>.tfplan)
//
// Workspace keys end in 8 hex digits (state.Key), so no workspace's index is
// named like another's -N or -text object. Every object carries the labels
// below; to read them:
//
//	kubectl -n example-ccm get cm -l app.kubernetes.io/managed-by=example-cloud-controller-manager,'!records.example.com/chunk','records.example.com/part!=text' \
//	  -o custom-columns='NAME:.metadata.name,KIND:.metadata.annotations.records\.example\.com/object-kind,NAMESPACE:.metadata.annotations.records\.example\.com/object-namespace,OBJECT:.metadata.annotations.records\.example\.com/object-name'
//	kubectl -n example-ccm get cm -l records.example.com/workspace=<key>
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "example-cloud-controller-manager"
	// LabelWorkspace is the workspace key, or for keys longer than a label
	// value may be (63) its first 54 characters, a dash and 8 hex digits of
	// its hash; AnnotationWorkspace always holds the key itself.
	LabelWorkspace = "records.example.com/workspace"
	// LabelChunk numbers the extra objects a large record spills into.
	LabelChunk = "records.example.com/chunk"
	// LabelPart is PartText on the plan text ConfigMaps, absent elsewhere.
	LabelPart = "records.example.com/part"
	PartText  = "text"

	AnnotationWorkspace       = "records.example.com/workspace"
	AnnotationObjectKind      = "records.example.com/object-kind"
	AnnotationObjectNamespace = "records.example.com/object-namespace"
	AnnotationObjectName      = "records.example.com/object-name"
	// AnnotationGeneration counts the commits of a record (index ConfigMap).
	AnnotationGeneration = "records.example.com/generation"
	// AnnotationSpilled lists, on the index ConfigMap, the pieces in chunk
	// ConfigMaps of every item that did not fit in it (see layout).
	AnnotationSpilled = "records.example.com/spilled"
	// AnnotationAdded maps each data key of a chunk ConfigMap, text
	// ConfigMap or Secret to the generation that wrote it, for garbage
	// collection (see gc).
	AnnotationAdded = "records.example.com/added"
)

// NamePrefix begins the name of every object of a record.
const NamePrefix = "ccm-plans-"

// IndexName is the name of workspace's index ConfigMap, the record itself.
func IndexName(workspace string) string { return recordSeries.name(workspace, 0) }

// TextName is the name of workspace's first plan text ConfigMap (more are
// TextName-1, -2, ... when the texts pass an object's size).
func TextName(workspace string) string { return textSeries.name(workspace, 0) }

// RecordKey is the index ConfigMap's key holding the Record as JSON.
const RecordKey = "record.json"

// AppliedPrefix begins the index keys of the applied files
// (Record.AppliedFiles): applied.main.tf.
const AppliedPrefix = "applied."

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

// Workspaces (state.Backends.Key, LegacyKey) are [a-z0-9-], at most 80
// characters (legacy ones; current ones at most 63), which also makes ccm-plans-<key>[-text][-N] a valid object name.
var workspaceRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,78}[a-z0-9])?$`)

func validWorkspace(ws string) error {
	if !workspaceRE.MatchString(ws) {
		return fmt.Errorf("records: invalid workspace key %q: want 1-80 characters of [a-z0-9-], starting and ending with a letter or digit", ws)
	}
	return nil
}

// series is one numbered run of a workspace's objects: the record's own
// (index ConfigMap 0, chunk ConfigMaps 1.., Secrets 0..) or the plan
// texts' ConfigMaps (0..).
type series struct {
	suffix string // after the workspace key
	part   string // LabelPart's value, "" for none
}

var (
	recordSeries = series{}
	textSeries   = series{suffix: "-" + PartText, part: PartText}
)

// name names object n of the series.
func (sr series) name(ws string, n int) string {
	s := NamePrefix + ws + sr.suffix
	if n == 0 {
		return s
	}
	return s + "-" + strconv.Itoa(n)
}

// number tells which object of workspace ws's series o is, or -1 for an
// object that is not (another workspace's or series', or misnamed).
func (sr series) number(o *obj, ws string) int {
	if o.annotations[AnnotationWorkspace] != ws || o.labels[LabelPart] != sr.part {
		return -1
	}
	v, ok := o.labels[LabelChunk]
	if !ok {
		if o.name == sr.name(ws, 0) {
			return 0
		}
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || o.name != sr.name(ws, n) {
		return -1
	}
	return n
}

// chunkOf tells which object of workspace ws's record series o is: 0 for
// the index (a ConfigMap), -1 for none.
func chunkOf(o *obj, ws string) int { return recordSeries.number(o, ws) }

// workspaceLabel is ws as a label value (at most 63 characters).
func workspaceLabel(ws string) string {
	if len(ws) <= validation.LabelValueMaxLength {
		return ws
	}
	sum := sha256.Sum256([]byte(ws))
	return ws[:54] + "-" + hex.EncodeToString(sum[:4])
}

// workspaceSelector selects every object of ws, of every series.
func workspaceSelector(ws string) string {
	return LabelManagedBy + "=" + ManagedBy + "," + LabelWorkspace + "=" + workspaceLabel(ws)
}

// recordsSelector selects the index and chunk ConfigMaps of every record,
// not the plan texts (List does not read them).
// Selector selects every object of every record but the plan texts: what
// List reads, and what a reader watches to see records change.
const Selector = recordsSelector

const recordsSelector = LabelManagedBy + "=" + ManagedBy + "," + LabelWorkspace + "," + LabelPart + "!=" + PartText

// setMeta sets the labels and annotations the store owns on o, object n
// of series sr, keeping any others (someone's kubectl annotate).
func setMeta(o *obj, ws string, sr series, n int, ref objectref.Ref) {
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
	setOrDelete(o.labels, LabelPart, sr.part)
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

// blob is a value stored per plan under <plan id><suffix>, whole or cut
// into <key>.<i>-of-<n> pieces: a plan's gzipped text (text ConfigMaps)
// or its saved plan file (Secrets).
type blob struct {
	suffix string
	what   string // for messages
	re     *regexp.Regexp
}

func newBlob(suffix, what string) blob {
	return blob{suffix: suffix, what: what, re: regexp.MustCompile(`^(.+` + regexp.QuoteMeta(suffix) + `)(?:\.([0-9]+)-of-([0-9]+))?$`)}
}

var (
	textBlob  = newBlob(".txt.gz", "plan text")
	savedBlob = newBlob(".tfplan", "saved plan")
)

// key is the data key of planID's blob.
func (b blob) key(planID string) (string, error) {
	k := planID + b.suffix
	if planID == "" || strings.HasPrefix(planID, ".") || len(validation.IsConfigMapKey(k+".999-of-999")) > 0 {
		return "", fmt.Errorf("records: plan id %q cannot name a data key", planID)
	}
	return k, nil
}

// of is the blob key a data key belongs to, or "".
func (b blob) of(k string) string {
	if m := b.re.FindStringSubmatch(k); m != nil {
		return m[1]
	}
	return ""
}

func validFileName(name string) error {
	if name == RecordKey || strings.HasPrefix(name, AppliedPrefix) {
		return fmt.Errorf("records: file name %q is reserved", name)
	}
	// Room for the ".<16 hex>" of a spilled piece.
	if errs := validation.IsConfigMapKey(name + ".0123456789abcdef"); len(errs) > 0 {
		return fmt.Errorf("records: file name %q: %s", name, strings.Join(errs, "; "))
	}
	return nil
}
