package tfprovider

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Values of example_certificate's on_duplicate.
const (
	onDuplicateUpload = "upload"
	onDuplicateAdopt  = "adopt_if_tags_match"
)

// certificateUploads serializes one terraform command's certificate
// creates and remembers what they created or adopted, so that a create's
// sweep never takes a certificate of the same apply for a leftover (one
// uploaded, its answer not yet back, would otherwise look unrecorded).
type certificateUploads struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (u *certificateUploads) add(id string) {
	if u.ids == nil {
		u.ids = map[string]bool{}
	}
	u.ids[id] = true
}

// users are the tags of the load balancers whose listeners use each
// certificate of region.
func (r *certificateResource) users(ctx context.Context, region string) (map[string][]map[string]string, error) {
	lbs, err := r.data.client.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{Region: region})
	if err != nil {
		return nil, err
	}
	users := map[string][]map[string]string{}
	for _, lb := range lbs {
		for _, l := range lb.Listeners {
			for _, id := range l.CertificateIDs {
				users[id] = append(users[id], lb.Tags)
			}
		}
	}
	return users, nil
}

// unrecorded finds the certificate in that an earlier apply uploaded and
// could not record: same name, region, text and tags, and used by no load
// balancer but ones with these same tags (an apply killed after it moved
// its own load balancer to the upload leaves that; a certificate another
// configuration recorded is not taken). The oldest, if several; nil if none.
func (r *certificateResource) unrecorded(ctx context.Context, in exampleapi.CreateCertificateRequest) (*exampleapi.Certificate, error) {
	found, err := r.data.client.ListCertificates(ctx, exampleapi.CertificateFilter{Name: in.Name, Region: in.Region})
	if err != nil {
		return nil, err
	}
	found = slices.DeleteFunc(found, func(c exampleapi.Certificate) bool {
		return c.CertificatePEM != in.CertificatePEM || !maps.Equal(c.Tags, in.Tags) || (in.Region != "" && c.Region != in.Region)
	})
	if len(found) == 0 {
		return nil, nil
	}
	users, err := r.users(ctx, found[0].Region)
	if err != nil {
		return nil, err
	}
	found = slices.DeleteFunc(found, func(c exampleapi.Certificate) bool {
		return slices.ContainsFunc(users[c.ID], func(tags map[string]string) bool { return !maps.Equal(tags, in.Tags) })
	})
	if len(found) == 0 {
		return nil, nil
	}
	oldest := slices.MinFunc(found, func(a, b exampleapi.Certificate) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return &oldest, nil
}

// sweep deletes the leftovers of earlier interrupted applies of this
// configuration: certificates of cert's region with exactly its tags that
// no load balancer uses and that this terraform command did not upload.
// An apply killed after an upload, whose configuration then moved on (a
// TLS Secret renewed meanwhile), leaves one that unrecorded no longer
// matches. Run by creates with delete_leftovers (tags that name one
// owner), holding the uploads lock. A failure is a warning: the
// certificate itself is in place.
func (r *certificateResource) sweep(ctx context.Context, cert *exampleapi.Certificate, diags *diag.Diagnostics) {
	certs, err := r.data.client.ListCertificates(ctx, exampleapi.CertificateFilter{Region: cert.Region})
	if err != nil {
		diags.AddWarning("Cannot look for certificates interrupted applies left", err.Error())
		return
	}
	certs = slices.DeleteFunc(certs, func(c exampleapi.Certificate) bool {
		return r.data.uploads.ids[c.ID] || !maps.Equal(c.Tags, cert.Tags)
	})
	if len(certs) == 0 {
		return
	}
	users, err := r.users(ctx, cert.Region)
	if err != nil {
		diags.AddWarning("Cannot look for certificates interrupted applies left", err.Error())
		return
	}
	for _, c := range certs {
		if len(users[c.ID]) > 0 {
			continue
		}
		if err := r.data.client.DeleteCertificate(ctx, c.ID); err != nil && !exampleapi.IsNotFound(err) {
			diags.AddWarning("Cannot delete a certificate an interrupted apply left", err.Error())
			continue
		}
		tflog.Info(ctx, "deleted a certificate an interrupted apply left", map[string]any{"certificate_id": c.ID, "name": c.Name})
		diags.AddWarning("Certificate left by an interrupted apply deleted",
			"Certificate "+c.ID+" ("+c.Name+"), uploaded "+c.CreatedAt.Format("2006-01-02T15:04:05Z07:00")+" with this certificate's "+
				"tags by an apply that could not record it, was used by no load balancer: delete_leftovers deleted it, so no copy of its private key is left behind.")
	}
}
