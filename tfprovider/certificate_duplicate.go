package tfprovider

import (
	"context"
	"maps"
	"slices"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Values of example_certificate's on_duplicate.
const (
	onDuplicateUpload = "upload"
	onDuplicateAdopt  = "adopt_if_tags_match"
)

// unrecorded finds the certificate in that an earlier apply uploaded and
// could not record: same name, region, text and tags, and used by no load
// balancer (a recorded certificate is, once its apply finished). The
// oldest, if several; nil if none.
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
	used, err := r.data.client.CertificatesInUse(ctx, found[0].Region)
	if err != nil {
		return nil, err
	}
	found = slices.DeleteFunc(found, func(c exampleapi.Certificate) bool { return used[c.ID] })
	if len(found) == 0 {
		return nil, nil
	}
	oldest := slices.MinFunc(found, func(a, b exampleapi.Certificate) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return &oldest, nil
}
