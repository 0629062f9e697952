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
