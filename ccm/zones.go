package ccm

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Zones shares the instance cache: the node controller asks for the zone
// right after the addresses and type of the same node.

// GetZone is the zone of the instance this process runs on (metadata
// /v1/self). The CCM's controllers use the ByProviderID/ByNodeName forms.
func (i *instances) GetZone(ctx context.Context) (cloudprovider.Zone, error) {
	md, err := i.cache.get(ctx, selfKey, i.md.Self)
	if err != nil {
		return cloudprovider.Zone{}, fmt.Errorf("zone of this instance (metadata /v1/self): %w", err)
	}
	return zoneOf(md), nil
}

// GetZoneByProviderID is the zone of the instance with this providerID.
func (i *instances) GetZoneByProviderID(ctx context.Context, providerID string) (cloudprovider.Zone, error) {
	md, err := i.byProviderID(ctx, providerID)
	if err != nil {
		return cloudprovider.Zone{}, fmt.Errorf("zone of %s: %w", providerID, err)
	}
	return zoneOf(md), nil
}

// GetZoneByNodeName is the zone of the instance named like the node.
func (i *instances) GetZoneByNodeName(ctx context.Context, nodeName types.NodeName) (cloudprovider.Zone, error) {
	md, err := i.byName(ctx, string(nodeName))
	if err != nil {
		return cloudprovider.Zone{}, fmt.Errorf("zone of node %s: %w", nodeName, err)
	}
	return zoneOf(md), nil
}

func zoneOf(md *exampleapi.InstanceMetadata) cloudprovider.Zone {
	return cloudprovider.Zone{FailureDomain: md.Zone, Region: md.Region}
}
