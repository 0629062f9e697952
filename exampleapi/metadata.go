package exampleapi

import (
	"context"
	"net/http"
	"net/url"
)

// MetadataClient calls the read-only Example metadata API: a Client's
// transport, with the metadata API's methods instead of the control API's.
type MetadataClient Client

// NewMetadata returns a metadata API client; Options.Endpoint is the
// metadata listener and Options.Token the read-only token.
func NewMetadata(o Options) (*MetadataClient, error) {
	c, err := New(o)
	return (*MetadataClient)(c), err
}

// Instance returns the metadata of the instance with this id.
func (m *MetadataClient) Instance(ctx context.Context, id string) (*InstanceMetadata, error) {
	return call[InstanceMetadata](ctx, m.t, request{op: "MetadataInstance", method: http.MethodGet, path: "/v1/instances/" + esc(id)})
}

// InstanceByName returns the metadata of the instance with this name; region
// may be empty when names are unambiguous.
func (m *MetadataClient) InstanceByName(ctx context.Context, name, region string) (*InstanceMetadata, error) {
	q := url.Values{}
	if region != "" {
		q.Set("region", region)
	}
	return call[InstanceMetadata](ctx, m.t, request{op: "MetadataInstanceByName", method: http.MethodGet, path: "/v1/instances/by-name/" + esc(name), query: q})
}

// Placement returns the region and zone of an instance.
func (m *MetadataClient) Placement(ctx context.Context, id string) (*Placement, error) {
	return call[Placement](ctx, m.t, request{op: "MetadataPlacement", method: http.MethodGet, path: "/v1/instances/" + esc(id) + "/placement"})
}

// Self returns the metadata of the instance the caller runs on.
func (m *MetadataClient) Self(ctx context.Context) (*InstanceMetadata, error) {
	return call[InstanceMetadata](ctx, m.t, request{op: "MetadataSelf", method: http.MethodGet, path: "/v1/self"})
}
