// Package providerid parses and formats the Kubernetes node providerID of
// the Example cloud: example://<region>/<instance-id>.
package providerid

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Scheme is the prefix of every Example cloud providerID.
const Scheme = "example://"

// The API names regions like "eu-central-1" and instance ids "i-<hex>";
// anything else in a providerID is a misconfigured node, not ours to guess.
var (
	regionRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	instanceRE = regexp.MustCompile(`^i-[A-Za-z0-9]{1,64}$`)
)

// ErrNotExample is returned (wrapped) for a providerID of another cloud or
// an empty one, so callers can tell "not ours" from "ours but broken".
var ErrNotExample = errors.New("not an Example cloud providerID")

// ID is a parsed providerID.
type ID struct {
	Region     string
	InstanceID string
}

// String formats the providerID, the inverse of Parse.
func (id ID) String() string { return Format(id.Region, id.InstanceID) }

// Format returns example://<region>/<instance-id>.
func Format(region, instanceID string) string {
	return Scheme + region + "/" + instanceID
}

// Parse splits example://<region>/<instance-id>.
func Parse(providerID string) (ID, error) {
	rest, ok := strings.CutPrefix(providerID, Scheme)
	if !ok {
		return ID{}, fmt.Errorf("providerID %q: %w (want %s<region>/<instance-id>)", providerID, ErrNotExample, Scheme)
	}
	region, instance, ok := strings.Cut(rest, "/")
	switch {
	case !ok:
		return ID{}, fmt.Errorf("providerID %q: missing /<instance-id> after the region", providerID)
	case !regionRE.MatchString(region):
		return ID{}, fmt.Errorf("providerID %q: invalid region %q (lower-case letters, digits and '-')", providerID, region)
	case !instanceRE.MatchString(instance):
		return ID{}, fmt.Errorf("providerID %q: invalid instance id %q (want i-<letters and digits>)", providerID, instance)
	}
	return ID{Region: region, InstanceID: instance}, nil
}
