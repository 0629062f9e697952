package objectref

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// HashedName is a name computed for an object where its own would not do
// (too long, not unique across clusters, or hiding whose it is): prefix
// and the first digits hex digits of the SHA-256 of parts joined by NUL.
// The cloud names of load balancers and addresses, target pool keys and
// the claims ConfigMaps are all of this form, computed here once: they
// are stored in the cloud and the API server, so their inputs never
// change.
func HashedName(prefix string, digits int, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return prefix + hex.EncodeToString(sum[:])[:digits]
}

// HashSeed is what a name hashed for r stands on: its uid, or without one
// (a manifest rendered offline) "name:" and namespace/name.
func (r Ref) HashSeed() string {
	if r.UID != "" {
		return r.UID
	}
	return "name:" + r.Namespace + "/" + r.Name
}
