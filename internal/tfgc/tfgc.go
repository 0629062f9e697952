// Package tfgc sets the garbage collector of the terraform and tofu
// processes the controller and the tests start. Such a process lives a
// fraction of a second and allocates a few tens of MiB; collecting that
// as it goes was a fifth of its CPU (plan 0.222 → 0.175 CPU-s, apply
// 0.168 → 0.131, for 11 MiB more resident, on 2026-12-02). Off, it
// collects only near a memory limit, so a process with a large state
// still stays bounded.
package tfgc

import "strconv"

// DefaultLimit is the heap a terraform process grows to before it
// collects: over ten times what a plan of one object's workspace takes.
const DefaultLimit int64 = 512 << 20

// Env is the environment that makes a terraform process collect garbage
// only near limit bytes of heap (0: DefaultLimit); negative leaves Go's
// own collector (nil).
func Env(limit int64) map[string]string {
	switch {
	case limit < 0:
		return nil
	case limit == 0:
		limit = DefaultLimit
	}
	return map[string]string{"GOGC": "off", "GOMEMLIMIT": strconv.FormatInt(limit, 10)}
}
