// Command terraform-provider-example is the Terraform provider for the
// Example cloud. Terraform starts it as a plugin; run it with -debug to get a
// TF_REATTACH_PROVIDERS line for debuggers.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/example/cloud-provider-example/tfprovider"
)

func main() {
	debug := flag.Bool("debug", false, "serve for a debugger: print TF_REATTACH_PROVIDERS instead of being started by terraform")
	flag.Parse()
	if !*debug {
		go exitWhenOrphaned(os.Getppid())
	}

	err := providerserver.Serve(context.Background(), tfprovider.New(tfprovider.Version), providerserver.ServeOpts{
		Address:         tfprovider.Address,
		Debug:           *debug,
		ProtocolVersion: 6,
	})
	if err != nil {
		log.Fatal(err)
	}
}

// exitWhenOrphaned ends the provider when terraform, its parent, is gone. A
// terraform killed with SIGKILL (as when the CCM that ran it is killed:
// terraform-exec sets Pdeathsig) cannot stop its plugins, which would
// otherwise live on, orphaned, until the machine restarts.
func exitWhenOrphaned(parent int) {
	for range time.Tick(time.Second) {
		if os.Getppid() != parent {
			log.Printf("terraform (pid %d) is gone; exiting", parent)
			os.Exit(1)
		}
	}
}
