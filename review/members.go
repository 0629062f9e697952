package review

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
)

// A group's rendering says what became of each member (left out, a
// listener another member has, a setting the primary overrides); each
// member's events say it, once per change: every member's reconcile
// renders the group again.

// memberReports keeps a digest of what was last said of each group's
// members, for the groups that exist (GroupRemoved forgets one).
type memberReports struct {
	mu       sync.Mutex
	reported map[annotations.Group][sha256.Size]byte
}

// len is how many groups have a digest.
func (m *memberReports) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.reported)
}

// changed tells whether what is said of g's members differs from what
// was said last, and keeps its digest.
func (m *memberReports) changed(g annotations.Group, said string) bool {
	sum := sha256.Sum256([]byte(said))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reported == nil {
		m.reported = map[annotations.Group][sha256.Size]byte{}
	}
	if last, ok := m.reported[g]; ok && last == sum {
		return false
	}
	m.reported[g] = sum
	return true
}

// GroupRemoved forgets what was said of g's members: its load balancer is
// destroyed (its last member left).
func (b *Board) GroupRemoved(g annotations.Group) {
	b.members.mu.Lock()
	defer b.members.mu.Unlock()
	delete(b.members.reported, g)
}

// ReportMembers tells each member of g what became of it in rep, when
// that changed: left out (invalid), a listener another member has, a
// setting the primary's overrides.
func (b *Board) ReportMembers(g annotations.Group, rep *engine.GroupReport) {
	type said struct {
		svc                  *v1.Service
		typ, reason, message string
	}
	var all []said
	for _, e := range rep.Excluded {
		err := fmt.Errorf("%s is left out of load balancer group %s: %w", objectref.Service(e.Service).Describe(), g, e.Err)
		all = append(all, said{e.Service, v1.EventTypeWarning, failedReason(err), err.Error()})
	}
	for _, c := range rep.Conflicts {
		all = append(all, said{c.Service, v1.EventTypeWarning, "ListenerConflict", fmt.Sprintf(
			"Listener %s is not served: %s, an earlier member of load balancer group %s, has it", c.Listener, memberAs(c.Service, c.Winner), g)})
	}
	for _, ig := range rep.Ignored {
		all = append(all, said{ig.Service, v1.EventTypeWarning, "GroupSettingIgnored", fmt.Sprintf(
			"%s is %s here, but load balancer group %s takes it from its first member, %s (%s)",
			ig.Setting, orUnset(ig.Value), g, memberAs(ig.Service, ig.Primary), orUnset(ig.PrimaryValue))})
	}
	var digest strings.Builder
	for _, s := range all {
		fmt.Fprintf(&digest, "%s/%s\x00%s\x00%s\n", s.svc.Namespace, s.svc.Name, s.reason, s.message)
	}
	if !b.members.changed(g, digest.String()) {
		return
	}
	for _, s := range all {
		b.eventf(Subject{ref: objectref.Service(s.svc), event: s.svc}, s.typ, s.reason, "%s", s.message)
	}
}

// ConsentWithdrawn tells guest, a member of g from another namespace,
// and g's owner (a home member; nil: none to tell) that g's load balancer
// was applied without guest because g's namespace no longer consents
// (reason, in the guest's terms): the guest by the annotation it wrote,
// in the words of its ReferenceRefused event; the owner naming the guest
// by its namespace only.
func (b *Board) ConsentWithdrawn(g annotations.Group, owner, guest *v1.Service, reason string) {
	b.eventf(Subject{ref: objectref.Service(guest), event: guest}, v1.EventTypeWarning, "ReferenceGrantWithdrawn",
		"annotation %s: load balancer group %q of namespace %s no longer takes this Service: %s; its listeners left the group's load balancer, and its address is cleared",
		annotations.LBGroup, g.Name, g.Namespace, reason)
	if owner != nil {
		b.eventf(Subject{ref: objectref.Service(owner), event: owner}, v1.EventTypeNormal, "ReferenceGrantWithdrawn",
			"Load balancer group %s no longer serves %s, a guest: %s; its listeners left the load balancer",
			g, memberAs(owner, guest), reason)
	}
}

// memberAs is how an event on to's Service names member other: by name
// in to's own namespace; from another namespace, by its namespace only
// (one tenant's events never name another's objects).
func memberAs(to, other *v1.Service) string {
	if other.Namespace == to.Namespace {
		return objectref.Service(other).Describe()
	}
	return "a Service of namespace " + other.Namespace
}

func orUnset(v string) string {
	if v == "" {
		return "unset"
	}
	return v
}
