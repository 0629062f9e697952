// Command examplectl is review tooling for the Example cloud controller
// manager: render shows, offline, the Terraform the controller would apply;
// status, plan, history, review, approve, unlock, addresses and release read
// the plan records it keeps in the cluster (ConfigMaps only) and act on them
// by creating, as the caller, the PlanApprovals, StateUnlocks and
// AddressReleases it watches (see reviewapi and docs/examplectl.md); review
// --web does the same in a browser (reviewpage, docs/review-page.md).
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/example/cloud-provider-example/termsafe"
)

func main() {
	err := newRootCmd().Execute()
	var status exitStatus
	if errors.As(err, &status) {
		os.Exit(int(status)) // preview's outcome, not an error
	}
	if err != nil {
		// Errors quote the cluster's objects (and the API server's
		// messages): shown inert.
		fmt.Fprintln(os.Stderr, "examplectl:", termsafe.Text(err.Error()))
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "examplectl",
		Short:         "Review tooling for the Example cloud controller manager",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newRenderCmd(),
		newStatusCmd(),
		newPlanCmd(),
		newHistoryCmd(),
		newApproveCmd(),
		newUnlockCmd(),
		newPreviewCmd(),
		newAddressesCmd(),
		newReleaseCmd(),
		newExportCmd(),
		newReviewCmd(),
	)
	return root
}
