package podfs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// childEnv makes the test binary the pod's process: it mounts what Env
// says and prints what it then sees.
const childEnv = "PODFS_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		if err := FromEnv(); err != nil {
			fmt.Println("error:", err)
			os.Exit(3)
		}
		for _, p := range []string{"/etc/podfs-test/secret/tls.crt", "/var/podfs-test/config/greeting"} {
			b, err := os.ReadFile(p)
			fmt.Printf("%s=%s %v\n", p, b, err)
		}
		err := os.WriteFile("/etc/podfs-test/secret/new", []byte("x"), 0o644)
		fmt.Println("write to read-only:", err != nil)
		_, err = os.Stat("/etc/passwd")
		fmt.Println("the host's /etc still seen:", err == nil)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A process in a mount namespace of its own sees its volumes at their
// mount paths, read-only where asked, the rest of the host's tree beside
// them; the host sees none of it.
func TestApply(t *testing.T) {
	dir := t.TempDir()
	secret, config := filepath.Join(dir, "secret"), filepath.Join(dir, "config")
	for d, files := range map[string]map[string]string{secret: {"tls.crt": "CERT"}, config: {"greeting": "hello"}} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(d, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mounts, err := Encode([]Mount{{Source: secret, Target: "/etc/podfs-test/secret", ReadOnly: true}, {Source: config, Target: "/var/podfs-test/config"}})
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"=1", Env+"="+mounts, Scratch+"="+filepath.Join(dir, "scratch"))
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "/etc/podfs-test/secret/tls.crt=CERT <nil>\n/var/podfs-test/config/greeting=hello <nil>\nwrite to read-only: true\nthe host's /etc still seen: true\n"
	if string(out) != want {
		t.Fatalf("the process saw:\n%s\nwant:\n%s", out, want)
	}
	for _, p := range []string{"/etc/podfs-test", "/var/podfs-test"} {
		if _, err := os.Stat(p); err == nil || !strings.Contains(err.Error(), "no such file") {
			t.Errorf("the host sees %s: %v", p, err)
		}
	}
}

// A mount path that a symlink leads out of its top directory is refused:
// neither the mount nor the directories made for it reach the host.
func TestWithinRefusesSymlinksOut(t *testing.T) {
	top, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(top, "run")); err != nil {
		t.Fatal(err)
	}
	if err := within(top, filepath.Join(top, "run", "secrets", "token")); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("a path through a symlink out of %s: %v", top, err)
	}
	if err := within(top, filepath.Join(top, "etc", "secret-volume")); err != nil {
		t.Fatalf("a path inside: %v", err)
	}
}

// Handed its mounts without a mount namespace of its own, a process
// refuses them rather than change the host's.
func TestApplyRefusesTheHostsNamespace(t *testing.T) {
	err := Apply([]Mount{{Source: t.TempDir(), Target: "/etc/podfs-test"}}, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "CLONE_NEWNS") {
		t.Fatalf("Apply in the test's own mount namespace: %v", err)
	}
	if _, err := os.Stat("/etc/podfs-test"); err == nil {
		t.Fatal("the host has /etc/podfs-test")
	}
}
