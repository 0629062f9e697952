package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
)

func TestTofuPath(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tofu")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	onPath := func(string) (string, error) { return "/usr/local/bin/tofu", nil }
	notOnPath := func(name string) (string, error) { return "", errors.New(name + ": not found") }
	for _, tc := range []struct {
		name    string
		c       BinaryConfig
		look    func(string) (string, error)
		want    string
		wantErr string
	}{
		{name: "explicit path wins over PATH", c: BinaryConfig{Path: bin}, look: onPath, want: bin},
		{name: "PATH when no path", c: BinaryConfig{}, look: onPath, want: "/usr/local/bin/tofu"},
		{name: "missing explicit path", c: BinaryConfig{Path: bin + "-gone"}, look: onPath, wantErr: "tofu binary"},
		{name: "not on PATH", c: BinaryConfig{}, look: notOnPath, wantErr: "find tofu on PATH"},
		{name: "no install dir", c: BinaryConfig{Path: bin, InstallDir: t.TempDir()}, look: onPath, wantErr: "hc-install"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tofuPath(tc.c, tc.look)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestSameVersion(t *testing.T) {
	got := version.Must(version.NewVersion("1.10.10"))
	if err := sameVersion("1.10.10", got); err != nil {
		t.Fatal(err)
	}
	if err := sameVersion("v1.10.10", got); err != nil {
		t.Fatal(err)
	}
	if err := sameVersion("1.10.9", got); err == nil || !strings.Contains(err.Error(), "is version 1.10.10, want 1.10.9") {
		t.Fatalf("other version: %v", err)
	}
	// An unstamped build says 1.10.10-dev: not the release asked for.
	if err := sameVersion("1.10.10", version.Must(version.NewVersion("1.10.10-dev"))); err == nil {
		t.Fatal("a -dev build passed as the release")
	}
	if err := sameVersion("latest", got); err == nil {
		t.Fatal("an unparsable version passed")
	}
}

func TestFindBinaryUnknownEngine(t *testing.T) {
	_, _, err := FindBinary(context.Background(), BinaryConfig{Distribution: "pulumi"})
	if err == nil || !strings.Contains(err.Error(), `distribution "pulumi"`) {
		t.Fatalf("got %v", err)
	}
}

// Inits sharing a plugin cache run one at a time, except with an OpenTofu
// that locks its cache.
func TestCacheSafe(t *testing.T) {
	v := func(s string) *version.Version { return version.Must(version.NewVersion(s)) }
	for _, c := range []struct {
		dist Distribution
		v    *version.Version
		err  error
		want bool
	}{
		{DistributionTofu, v("1.10.10"), nil, true},
		{DistributionTofu, v("1.10.0-dev"), nil, true},
		{DistributionTofu, v("1.12.6"), nil, true},
		{DistributionTofu, v("1.9.4"), nil, false},
		{DistributionTofu, nil, errors.New("exit status 1"), false},
		{DistributionTerraform, v("1.11.4"), nil, false},
	} {
		if got := cacheSafe(c.dist, c.v, c.err); got != c.want {
			t.Errorf("%s %v %v: safe=%v, want %v", c.dist, c.v, c.err, got, c.want)
		}
	}
}
