package runner

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/example/cloud-provider-example/redact"
)

// Error is a failed terraform command, with Terraform's own diagnostics
// (secrets scrubbed) rather than just "exit status 1".
type Error struct {
	Op          string
	Workspace   string
	Diagnostics string
	Err         error
}

// Error is scrubbed once more with every secret any runner of this process
// registered: Diagnostics are scrubbed where they are built, but Err (whose
// text terraform-exec fills with terraform's stderr) is shown raw when
// there are none.
func (e *Error) Error() string {
	msg := fmt.Sprintf("terraform %s in workspace %s", e.Op, e.Workspace)
	switch {
	case e.Diagnostics != "":
		msg += ": " + e.Diagnostics
	case e.Err != nil:
		msg += ": " + e.Err.Error()
	}
	return known.String(msg)
}

// known holds the secret values of every live workspace of any Runner
// (workspace.source), each forgotten with its workspace.
var known = redact.New()

func (e *Error) Unwrap() error { return e.Err }

// ErrStateLocked means the state lock is held by someone else.
var ErrStateLocked = errors.New("state locked")

// ErrStalePlan means the saved plan no longer matches the state (the cloud
// or the state changed since planning): plan again.
var ErrStalePlan = errors.New("saved plan is stale")

// ErrInUse means the cloud refused to delete an object another still uses
// (the Example provider's "Cannot delete ...: it is in use", naming the
// users): a deletion blocked by something this apply does not change.
var ErrInUse = errors.New("object to delete is in use")

// Is lets callers match lock, stale-plan, in-use and encryption failures
// with errors.Is.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrStateLocked:
		// The second: the pg backend's own words when terraform workspace
		// new finds its workspace-creation lock taken. The third: a lock
		// met while loading a state that does not exist yet, which the
		// backend locks to create ("error loading state: the state is
		// already locked by another terraform client" and its Lock Info,
		// kubernetes), as left by a holder killed in that moment.
		return strings.Contains(e.Diagnostics, "Error acquiring the state lock") ||
			pgCreationLocked(e.Diagnostics) ||
			strings.Contains(e.Diagnostics, "already locked") && strings.Contains(e.Diagnostics, "Lock Info:")
	case ErrInUse:
		return strings.Contains(e.Diagnostics, "Cannot delete ") && strings.Contains(e.Diagnostics, ": it is in use")
	case ErrEncryption:
		return encryptionFailed(e.Diagnostics)
	case ErrStalePlan:
		// Or made in the other provider mode: a saved plan carries the
		// lock file it was made with (none when attached).
		return strings.Contains(e.Diagnostics, "Saved plan is stale") ||
			strings.Contains(e.Diagnostics, "created with a different set of external dependency selections")
	}
	return false
}

// newError wraps a terraform-exec failure. terraform-exec puts stderr in
// its error text; the JSON diagnostics, when there are any, are clearer.
func (w *workspace) newError(op string, err error, diags []string) error {
	text := strings.Join(diags, "\n")
	if text == "" {
		text = err.Error()
	}
	text = explainEncryption(text)
	if strings.Contains(text, "Backend initialization required") {
		// The initialisation does not match the backend block (a copied
		// one terraform refused, see initcopy.go): the next run inits.
		_ = os.Remove(w.meta("init"))
	}
	return &Error{Op: op, Workspace: w.key, Diagnostics: w.sanitize(text), Err: err}
}

// explainEncryption says what a decryption failure means: OpenTofu's own
// words name neither the cause nor the setting.
func explainEncryption(diags string) string {
	if !encryptionFailed(diags) {
		return diags
	}
	return "state encryption: the configured key does not decrypt the stored state or plan " +
		"(a wrong passphrase, a rotated key without the old one as fallback, or an unencrypted state without migrate: docs/opentofu.md#encryption): " + diags
}
