package lbmodel

import (
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
)

// Tag keys the controller puts on every load balancer it makes.
const (
	TagManagedBy        = "k8s.example.com/managed-by"
	TagClusterID        = exampleapi.TagClusterID
	TagServiceNamespace = exampleapi.TagNamespace
	TagServiceName      = exampleapi.TagServiceName
	TagServiceUID       = exampleapi.TagServiceUID
	// TagServicePort, on a pod pool, is the Service port it stands for
	// (ServicePort.Tag: "80/TCP").
	TagServicePort = "k8s.example.com/service-port"
	// TagGatewayName names, on a Gateway's load balancer, the Gateway
	// (its namespace is TagServiceNamespace's, its uid the owner tag
	// TagServiceUID's).
	TagGatewayName = "k8s.example.com/gateway-name"
)

// ManagedBy is TagManagedBy's value: this controller.
const ManagedBy = "example-cloud-controller-manager"

// OwnerTags are the tags of a load balancer made for ref (a Service or a
// Gateway): this controller and cluster, ref's namespace, its name under
// nameTag, and its owner tag when it has a uid.
func OwnerTags(clusterID string, ref objectref.Ref, nameTag string) map[string]string {
	tags := map[string]string{
		TagManagedBy:        ManagedBy,
		TagClusterID:        clusterID,
		TagServiceNamespace: ref.Namespace,
		nameTag:             ref.Name,
	}
	if ref.UID != "" {
		tags[TagServiceUID] = ref.OwnerTag()
	}
	return tags
}

// GatewayName is the cloud name of a Gateway's load balancer: k8s- and 28
// hex digits of a hash of the cluster id and the Gateway's uid (its
// namespace/name without one), like a Service's but never equal to one.
func GatewayName(g LoadBalancer, clusterID string) string {
	return objectref.HashedName("k8s-", 28, clusterID, "gateway", g.Ref().HashSeed())
}
