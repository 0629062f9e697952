// Command terraform-provider-example is the Terraform provider for the
// Example cloud. Terraform starts it as a plugin; run it with -debug to get a
// TF_REATTACH_PROVIDERS line for debuggers.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/example/cloud-provider-example/tfprovider"
)

func main() {
	debug := flag.Bool("debug", false, "serve for a debugger: print TF_REATTACH_PROVIDERS instead of being started by terraform")
	flag.Parse()
	if err := run(*debug); err != nil {
		log.Fatal(err)
	}
}

// magicCookie is the variable terraform starts its plugins with: without
// it, go-plugin's Serve says the binary is a plugin and exits at once.
const magicCookie = "TF_PLUGIN_MAGIC_COOKIE"

func run(debug bool) error {
	if !debug && os.Getenv(magicCookie) != "" {
		dir, err := socketDir()
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		go exitWhenOrphaned(os.Getppid(), dir)
	}
	return providerserver.Serve(context.Background(), tfprovider.New(tfprovider.Version), providerserver.ServeOpts{
		Address:         tfprovider.Address,
		Debug:           debug,
		ProtocolVersion: 6,
	})
}

// socketDir makes a directory of this process's own for the plugin
// socket (go-plugin's server listens in PLUGIN_UNIX_SOCKET_DIR, else the
// system's temporary directory), so that a provider that ends without
// closing its listener (orphaned, below) removes the socket with it,
// rather than leave one in /tmp per terraform killed (spawned mode,
// runner.ProviderSpawned; attached, the controller serves it itself).
func socketDir() (string, error) {
	dir, err := os.MkdirTemp(os.Getenv(plugin.EnvUnixSocketDir), "terraform-provider-example-")
	if err != nil {
		return "", fmt.Errorf("plugin socket directory: %w", err)
	}
	return dir, os.Setenv(plugin.EnvUnixSocketDir, dir)
}

// exitWhenOrphaned ends the provider, its socket directory removed, when
// terraform, its parent, is gone. A terraform killed with SIGKILL (as
// when the CCM that ran it is killed, or cancels it: terraform-exec sets
// Pdeathsig) cannot stop its plugins, which would otherwise live on,
// orphaned, until the machine restarts.
func exitWhenOrphaned(parent int, dir string) {
	for range time.Tick(time.Second) {
		if os.Getppid() != parent {
			log.Printf("terraform (pid %d) is gone; exiting", parent)
			_ = os.RemoveAll(dir)
			os.Exit(1)
		}
	}
}
