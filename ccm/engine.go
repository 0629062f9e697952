package ccm

import (
	"context"
	"fmt"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/servicelb"
)

// newEngine opens the engine of the cloud config, with board as its plan
// store, its reporter of stale locks forced open and its redactor of
// credentials, and tls as its reader of TLS Secrets.
//
// With terraform.encryption, the engine refuses to run terraform until
// keys reads them from their Secrets (it has a client only once
// initialised).
func newEngine(ctx context.Context, cfg *cloudconfig.Config, board *review.Board, tls *servicelb.TLSSecrets, owns func(objectref.Ref) bool) (*engine.Engine, *exampleapi.Client, *encryptionKeys, error) {
	token, err := cloudconfig.ReadToken(cfg.API.TokenFile, cfg.API.TokenEnv)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("api token: %w", err)
	}
	board.Redact(token)
	api, err := exampleapi.New(exampleapi.Options{Endpoint: cfg.API.Endpoint, Token: token})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("api client: %w", err)
	}
	// Plan records carry terraform's own rendering of every plan.
	e, err := engine.Open(ctx, cfg,
		engine.Wiring{Token: token, Observe: observeTerraform, ObserveRemembered: observeRemembered, OnForceUnlock: board.StaleLockForced, Credentials: board.RedactCredentials},
		engine.Options{Plans: board, PlanText: true, Migrated: board.MoveRecord, FindOrphan: orphanFinder(api, cfg),
			FindCertificates: unusedCertificates(api, cfg), PoolUsers: poolUsers(api, cfg), TLS: tls.Read, Owns: owns})
	if err != nil {
		return nil, nil, nil, err
	}
	var keys *encryptionKeys
	if cfg.Terraform.Encryption != nil {
		keys = &encryptionKeys{cfg: cfg.Terraform.Encryption, engine: e, redact: board.RedactFrom}
	}
	return e, api, keys, nil
}

// poolUsers is the engine's PoolUsers: the region's load balancers that
// forward to the pool tagged with each set of tags, by selection.
func poolUsers(api *exampleapi.Client, cfg *cloudconfig.Config) func(context.Context, map[string]map[string]string) (map[string][]string, error) {
	return func(ctx context.Context, pools map[string]map[string]string) (map[string][]string, error) {
		users, err := api.PoolUsers(ctx, cfg.Region, pools)
		if err != nil {
			return nil, fmt.Errorf("look for the load balancers using the target pools: %w", err)
		}
		return users, nil
	}
}

// orphanFinder is the engine's FindOrphan: the load balancer named name
// whose tags hold every owner tag (cluster id and the Service's uid, or
// the group's), if any.
func orphanFinder(api *exampleapi.Client, cfg *cloudconfig.Config) func(context.Context, string, map[string]string) (string, error) {
	return func(ctx context.Context, name string, owner map[string]string) (string, error) {
		found, err := api.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{Name: name, Region: cfg.Region})
		if err != nil {
			return "", fmt.Errorf("look for a load balancer named %q that an interrupted apply left: %w", name, err)
		}
		for _, lb := range found {
			if lb.Name == name && exampleapi.HasTags(lb.Tags, owner) {
				return lb.ID, nil
			}
		}
		return "", nil
	}
}

// unusedCertificates is the engine's FindCertificates: the region's
// certificates of the owner that no load balancer serves but the owner's
// own (exampleapi.StrayCertificates). A load balancer an interrupted
// apply created and could not record is the owner's too: its certificate
// is imported and replaced (or destroyed) while the next apply adopts
// that load balancer and moves its listeners.
func unusedCertificates(api *exampleapi.Client, cfg *cloudconfig.Config) func(context.Context, map[string]string) ([]engine.UnusedCertificate, error) {
	return func(ctx context.Context, owner map[string]string) ([]engine.UnusedCertificate, error) {
		certs, err := api.StrayCertificates(ctx, cfg.Region, owner)
		if err != nil {
			return nil, fmt.Errorf("look for certificates an interrupted apply uploaded: %w", err)
		}
		var out []engine.UnusedCertificate
		for _, c := range certs {
			out = append(out, engine.UnusedCertificate{ID: c.ID, CertificatePEM: c.CertificatePEM, CreatedAt: c.CreatedAt})
		}
		return out, nil
	}
}
