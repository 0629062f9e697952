package runner

import (
	"errors"
	"testing"
	"time"
)

func TestParseHeldLock(t *testing.T) {
	created := time.Date(2026, 11, 22, 1, 0, 46, 955168199, time.UTC)
	stderr := "Error: Error acquiring the state lock\n\nError message: the state is already locked by another terraform client\nLock Info:\n  ID:        9296823b-0ebb-7d08-bd17-217709d58ae3\n  Path:      \n  Operation: OperationTypeApply\n  Who:       root@vm\n  Version:   1.11.4\n  Created:   2026-11-22 01:00:46.955168199 +0000 UTC\n  Info:      \n"
	folded := "Error acquiring the state lock: Error message: the state is already locked by another terraform client Lock Info: ID: 9296823b-0ebb-7d08-bd17-217709d58ae3 Path: Operation: OperationTypeApply Who: root@vm Version: 1.11.4 Created: 2026-11-22 01:00:46.955168199 +0000 UTC Info: Terraform acquires a state lock"
	for name, text := range map[string]string{"stderr": stderr, "json diagnostic": folded} {
		li, ok := parseHeldLock(text)
		if !ok || li.ID != "9296823b-0ebb-7d08-bd17-217709d58ae3" || li.Who != "root@vm" || !li.Created.Equal(created) {
			t.Errorf("%s: %+v %v", name, li, ok)
		}
	}
	// The http backend names the holder only by ID; the Lock Info block is
	// our own attempt and must not lend its Created time.
	http := "Error acquiring the state lock: HTTP remote state already locked: ID=crashed-holder Lock Info: ID: our-attempt Who: me Created: 2026-11-22 01:00:46.955168199 +0000 UTC"
	if li, ok := parseHeldLock(http); !ok || li.ID != "crashed-holder" || !li.Created.IsZero() {
		t.Errorf("http: %+v %v", li, ok)
	}
	// The pg backend's workspace-creation lock: the Lock Info block is our
	// own attempt (here a workspace delete's), the holder unknown.
	pg := "Error: Error acquiring the state lock\n\nError message: Cannot lock workspace; already locked for workspace creation:\nws-1\nLock Info:\n  ID:        5953965d-0e9f-f298-66d5-366c1cb34982\n  Operation: state-replace-provider\n  Who:       root@vm\n"
	if li, ok := parseHeldLock(pg); ok {
		t.Errorf("pg workspace creation: parsed %+v as the holder", li)
	}
	if !errors.Is(&Error{Op: "workspace delete", Diagnostics: pg}, ErrStateLocked) {
		t.Error("pg workspace creation lock: not ErrStateLocked")
	}
	// The kubernetes backend's lock on a state it is creating, left by a
	// holder killed then: not under "Error acquiring the state lock".
	creating := "Error: error loading state: the state is already locked by another terraform client\nLock Info:\n  ID:        3d8794ca-8aca-8153-c2e9-30cf6d0e8aeb\n  Path:      \n  Operation: init\n  Who:       root@vm\n  Version:   1.11.4\n  Created:   2026-11-28 00:19:40.227380411 +0000 UTC\n  Info:      \n"
	if li, ok := parseHeldLock(creating); !ok || li.ID != "3d8794ca-8aca-8153-c2e9-30cf6d0e8aeb" || li.Created.IsZero() {
		t.Errorf("lock on a state being created: %+v %v", li, ok)
	}
	if !errors.Is(&Error{Op: "plan", Diagnostics: creating}, ErrStateLocked) {
		t.Error("lock on a state being created: not ErrStateLocked")
	}
	if _, ok := parseHeldLock("Error: something else"); ok {
		t.Error("parsed a lock from an unrelated error")
	}
}

// HeldLock reads the diagnostics alone when the error wraps nothing.
func TestHeldLockWithoutCause(t *testing.T) {
	diag := "Error: Error acquiring the state lock\n\nLock Info:\n  ID:        9296823b-0ebb-7d08-bd17-217709d58ae3\n  Who:       root@vm\n"
	id, who, _, ok := HeldLock(&Error{Op: "plan", Workspace: "w", Diagnostics: diag})
	if !ok || id != "9296823b-0ebb-7d08-bd17-217709d58ae3" || who != "root@vm" {
		t.Fatalf("HeldLock = %q %q %v", id, who, ok)
	}
}
