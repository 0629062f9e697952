// Command terraform-provider-example is the Terraform provider for the
// Example cloud. Terraform starts it as a plugin; run it with -debug to get a
// TF_REATTACH_PROVIDERS line for debuggers.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/example/cloud-provider-example/tfprovider"
)

func main() {
	debug := flag.Bool("debug", false, "serve for a debugger: print TF_REATTACH_PROVIDERS instead of being started by terraform")
	flag.Parse()

	err := providerserver.Serve(context.Background(), tfprovider.New(tfprovider.Version), providerserver.ServeOpts{
		Address:         tfprovider.Address,
		Debug:           *debug,
		ProtocolVersion: 6,
	})
	if err != nil {
		log.Fatal(err)
	}
}
