package ccm

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/providerid"
)

// Labels set on a Node when it is initialised (InstanceMetadata's
// AdditionalLabels). The cloud node controller sets them once and never
// updates them, so they only carry what cannot change for an instance. The
// standard topology and instance-type labels come from Zone, Region and
// InstanceType and are not repeated here.
const (
	LabelInstanceID     = "node.example.com/instance-id"
	LabelInstanceFamily = "node.example.com/instance-family" // "standard" of "standard-4"
)

// instances answers the node controllers from the metadata API (read-only
// token); it never calls the control API or Terraform.
type instances struct {
	md     *exampleapi.MetadataClient
	region string
	cache  *metadataCache
}

var (
	_ cloudprovider.InstancesV2 = (*instances)(nil)
	_ cloudprovider.Instances   = (*instances)(nil)
	_ cloudprovider.Zones       = (*instances)(nil)
)

// newInstancesFromConfig builds the metadata client from cfg.Metadata. The
// read-only token is preferred; without one the API token is used, as it
// can read metadata too.
func newInstancesFromConfig(cfg *cloudconfig.Config) (*instances, error) {
	token, err := cloudconfig.ReadToken(cfg.Metadata.TokenFile, cfg.Metadata.TokenEnv)
	if err != nil && cfg.Metadata.TokenFile == "" {
		// An unreadable metadata.tokenFile stays an error: falling back
		// would hide a broken Secret mount.
		token, err = cloudconfig.ReadToken(cfg.API.TokenFile, cfg.API.TokenEnv)
	}
	if err != nil {
		return nil, fmt.Errorf("metadata API token (metadata.tokenFile, $%s, else the API token): %w", cfg.Metadata.TokenEnv, err)
	}
	md, err := exampleapi.NewMetadata(exampleapi.Options{
		Endpoint:  cfg.Metadata.Endpoint,
		Token:     token,
		UserAgent: "example-cloud-controller-manager",
	})
	if err != nil {
		return nil, fmt.Errorf("metadata API client: %w", err)
	}
	return newInstances(md, cfg.Region, cfg.Metadata.CacheTTL.Duration), nil
}

// newInstances serves nodes of region; answers are cached for ttl.
func newInstances(md *exampleapi.MetadataClient, region string, ttl time.Duration) *instances {
	return &instances{md: md, region: region, cache: newMetadataCache(ttl)}
}

// InstanceExists is false only when the metadata API says 404: the node
// lifecycle controller then deletes the Node. Any other error keeps it.
func (i *instances) InstanceExists(ctx context.Context, node *v1.Node) (bool, error) {
	_, err := i.byNode(ctx, node)
	return exists("node "+node.Name, err)
}

// InstanceShutdown is true for a stopped instance (the Node gets the
// shutdown taint). A deleted one is not "shut down": InstanceExists
// reports it.
func (i *instances) InstanceShutdown(ctx context.Context, node *v1.Node) (bool, error) {
	md, err := i.byNode(ctx, node)
	return shutdown("node "+node.Name, md, err)
}

// InstanceMetadata describes the node's instance; the controller turns it
// into spec.providerID, status.addresses and the topology labels.
func (i *instances) InstanceMetadata(ctx context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	md, err := i.byNode(ctx, node)
	if err != nil {
		return nil, fmt.Errorf("instance metadata for node %s: %w", node.Name, err)
	}
	return &cloudprovider.InstanceMetadata{
		ProviderID:       providerid.Format(md.Region, md.ID),
		InstanceType:     md.Type,
		NodeAddresses:    nodeAddresses(md),
		Zone:             md.Zone,
		Region:           md.Region,
		AdditionalLabels: additionalLabels(md),
	}, nil
}

// NodeAddresses returns the addresses of the instance named name.
func (i *instances) NodeAddresses(ctx context.Context, name types.NodeName) ([]v1.NodeAddress, error) {
	md, err := i.byName(ctx, string(name))
	if err != nil {
		return nil, fmt.Errorf("node addresses of node %s: %w", name, err)
	}
	return nodeAddresses(md), nil
}

// NodeAddressesByProviderID returns the addresses of the instance.
func (i *instances) NodeAddressesByProviderID(ctx context.Context, providerID string) ([]v1.NodeAddress, error) {
	md, err := i.byProviderID(ctx, providerID)
	if err != nil {
		return nil, fmt.Errorf("node addresses of %s: %w", providerID, err)
	}
	return nodeAddresses(md), nil
}

// InstanceID returns "<region>/<instance-id>": cloudprovider's
// GetInstanceProviderID prepends "example://" to it, which gives the
// providerID. A missing instance is the bare cloudprovider.InstanceNotFound,
// as its callers compare with ==.
func (i *instances) InstanceID(ctx context.Context, nodeName types.NodeName) (string, error) {
	md, err := i.byName(ctx, string(nodeName))
	switch {
	case exampleapi.IsNotFound(err):
		klog.V(4).InfoS("No instance for node", "node", nodeName, "err", err)
		return "", cloudprovider.InstanceNotFound
	case err != nil:
		return "", fmt.Errorf("instance id of node %s: %w", nodeName, err)
	}
	return strings.TrimPrefix(providerid.Format(md.Region, md.ID), providerid.Scheme), nil
}

// InstanceType returns the type of the instance named name.
func (i *instances) InstanceType(ctx context.Context, name types.NodeName) (string, error) {
	md, err := i.byName(ctx, string(name))
	if err != nil {
		return "", fmt.Errorf("instance type of node %s: %w", name, err)
	}
	return md.Type, nil
}

// InstanceTypeByProviderID returns the type of the instance.
func (i *instances) InstanceTypeByProviderID(ctx context.Context, providerID string) (string, error) {
	md, err := i.byProviderID(ctx, providerID)
	if err != nil {
		return "", fmt.Errorf("instance type of %s: %w", providerID, err)
	}
	return md.Type, nil
}

// AddSSHKeyToAllInstances is not offered by the Example cloud.
func (i *instances) AddSSHKeyToAllInstances(context.Context, string, []byte) error {
	return cloudprovider.NotImplemented
}

// CurrentNodeName is the hostname: the metadata hostname of an instance is
// its name, which is what the kubelet registers as the node name.
func (i *instances) CurrentNodeName(_ context.Context, hostname string) (types.NodeName, error) {
	return types.NodeName(hostname), nil
}

// InstanceExistsByProviderID is InstanceExists for a providerID.
func (i *instances) InstanceExistsByProviderID(ctx context.Context, providerID string) (bool, error) {
	_, err := i.byProviderID(ctx, providerID)
	return exists(providerID, err)
}

// InstanceShutdownByProviderID is InstanceShutdown for a providerID.
func (i *instances) InstanceShutdownByProviderID(ctx context.Context, providerID string) (bool, error) {
	md, err := i.byProviderID(ctx, providerID)
	return shutdown(providerID, md, err)
}

// exists and shutdown turn a lookup of what (a node or a providerID) into
// the controllers' answer.
func exists(what string, err error) (bool, error) {
	switch {
	case exampleapi.IsNotFound(err):
		klog.V(4).InfoS("Instance does not exist", "for", what, "err", err)
		return false, nil
	case err != nil:
		return false, fmt.Errorf("instance exists for %s: %w", what, err)
	}
	return true, nil
}

func shutdown(what string, md *exampleapi.InstanceMetadata, err error) (bool, error) {
	switch {
	case exampleapi.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("instance shutdown for %s: %w", what, err)
	}
	klog.V(4).InfoS("Instance state", "for", what, "instance", md.ID, "state", md.State)
	return md.State == exampleapi.InstanceStopped, nil
}

// byNode prefers spec.providerID (set once the node is initialised, and
// unambiguous) over the node name.
func (i *instances) byNode(ctx context.Context, node *v1.Node) (*exampleapi.InstanceMetadata, error) {
	if node.Spec.ProviderID != "" {
		return i.byProviderID(ctx, node.Spec.ProviderID)
	}
	return i.byName(ctx, node.Name)
}

// byProviderID accepts only providerIDs of this cloud and region: anything
// else is a misconfigured node, and must not read as "instance deleted".
func (i *instances) byProviderID(ctx context.Context, providerID string) (*exampleapi.InstanceMetadata, error) {
	id, err := providerid.Parse(providerID)
	if err != nil {
		return nil, err
	}
	if id.Region != i.region {
		return nil, fmt.Errorf("providerID %q is in region %s, but this cloud-controller-manager serves region %s", providerID, id.Region, i.region)
	}
	return i.byID(ctx, id.InstanceID)
}

func (i *instances) byID(ctx context.Context, id string) (*exampleapi.InstanceMetadata, error) {
	md, err := i.cache.get(ctx, idKey(id), func(ctx context.Context) (*exampleapi.InstanceMetadata, error) {
		return i.md.Instance(ctx, id)
	})
	if err != nil {
		return nil, fmt.Errorf("instance %s: %w", id, markNotFound(err))
	}
	return md, nil
}

// byName looks the node name up among the instances of our region (the
// metadata hostname is the instance name).
func (i *instances) byName(ctx context.Context, name string) (*exampleapi.InstanceMetadata, error) {
	md, err := i.cache.get(ctx, nameKey(i.region, name), func(ctx context.Context) (*exampleapi.InstanceMetadata, error) {
		return i.md.InstanceByName(ctx, name, i.region)
	})
	if err != nil {
		return nil, fmt.Errorf("instance named %s in region %s: %w", name, i.region, markNotFound(err))
	}
	return md, nil
}

// markNotFound makes a 404 match cloudprovider.InstanceNotFound as well.
func markNotFound(err error) error {
	if exampleapi.IsNotFound(err) {
		return fmt.Errorf("%w: %w", cloudprovider.InstanceNotFound, err)
	}
	return err
}

// nodeAddresses lists the private IPv4 first (the node IP the kubelet picks
// by default), then the IPv6, then the public IPv4 and the hostname. The
// IPv6 is an InternalIP although the cloud routes it globally: it is the
// node's only IPv6, and in-cluster consumers (node IPs of each family, CNI
// plugins) look for InternalIPs. docs/instances.md has the details.
func nodeAddresses(md *exampleapi.InstanceMetadata) []v1.NodeAddress {
	var out []v1.NodeAddress
	add := func(t v1.NodeAddressType, addr string) {
		if addr != "" {
			out = append(out, v1.NodeAddress{Type: t, Address: addr})
		}
	}
	add(v1.NodeInternalIP, md.PrivateIPv4)
	add(v1.NodeInternalIP, md.IPv6)
	add(v1.NodeExternalIP, md.PublicIPv4)
	add(v1.NodeHostName, md.Hostname)
	return out
}

// additionalLabels omits a value that is not a valid label value rather
// than fail the node's initialisation over a label.
func additionalLabels(md *exampleapi.InstanceMetadata) map[string]string {
	labels := map[string]string{}
	set := func(key, value string) {
		if value != "" && len(validation.IsValidLabelValue(value)) == 0 {
			labels[key] = value
		}
	}
	set(LabelInstanceID, md.ID)
	if i := strings.LastIndexByte(md.Type, '-'); i > 0 {
		set(LabelInstanceFamily, md.Type[:i])
	}
	return labels
}
