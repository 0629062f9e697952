package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	readyMarker  = "DEMO READY"
	failedMarker = "DEMO FAILED"
)

func pidFile(dir string) string { return filepath.Join(dir, "supervisor.pid") }
func logFile(dir string) string { return filepath.Join(dir, "demo.log") }

// running returns the supervisor's pid when it is alive.
func running(dir string) (int, bool) {
	data, err := os.ReadFile(pidFile(dir))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || syscall.Kill(pid, 0) != nil {
		return 0, false
	}
	return pid, true
}

// up starts the supervisor detached and follows its log until the demo is
// ready (or failed).
func up(dir, bin, helm string) error {
	if pid, ok := running(dir); ok {
		fmt.Printf("The demo is already running (supervisor pid %d). Its log so far:\n\n", pid)
		data, _ := os.ReadFile(logFile(dir))
		os.Stdout.Write(data)
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	logf, err := os.Create(logFile(dir))
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "supervise", "--dir", dir, "--bin", bin, "--helm", helm)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own session: the demo outlives `make demo` and the terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start supervisor: %w", err)
	}
	logf.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return follow(logFile(dir), exited)
}

// follow prints the log as it grows until a marker line.
func follow(path string, exited <-chan error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var partial string
	for {
		line, err := r.ReadString('\n')
		partial += line
		if err == nil {
			fmt.Print(partial)
			switch {
			case strings.HasPrefix(partial, readyMarker):
				return nil
			case strings.HasPrefix(partial, failedMarker):
				return errors.New("the demo failed; see above (and the logs it names)")
			}
			partial = ""
			continue
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		select {
		case err := <-exited:
			rest, _ := io.ReadAll(r)
			fmt.Print(partial + string(rest))
			return fmt.Errorf("the demo supervisor exited early: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// down stops the supervisor (it stops the rest) and removes dir.
func down(dir string) error {
	if pid, ok := running(dir); ok {
		fmt.Printf("stopping the demo (supervisor pid %d)\n", pid)
		_ = syscall.Kill(pid, syscall.SIGTERM)
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if syscall.Kill(pid, 0) != nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	} else {
		fmt.Println("no demo is running")
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	fmt.Println("removed", dir)
	return nil
}

// enter runs args inside the running demo's namespaces (nsenter), with
// KUBECONFIG set to the demo's admin kubeconfig.
func enter(dir string, args []string) error {
	pid, ok := running(dir)
	if !ok {
		return errors.New("no demo is running (make demo)")
	}
	if len(args) == 0 {
		return errors.New("exec: name a command, e.g. example-demo exec -- kubectl get nodes")
	}
	cmd := exec.Command("nsenter", append([]string{"--target", strconv.Itoa(pid), "--user", "--net", "--preserve-credentials", "--"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "control-plane", "admin.kubeconfig"))
	return cmd.Run()
}
