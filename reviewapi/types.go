// Package reviewapi is the review.example.com API: the objects people
// create to approve a plan (PlanApproval), to force a state lock open
// (StateUnlock) or to release a kept reserved address (AddressRelease). Only reviewers may create them (RBAC), and the admission
// policy shipped in deploy/ makes the API server check that the person
// named in an object is the one who created it, and that nobody changes it
// afterwards. The controller reads them; examplectl creates them.
//
// The objects are plain structs converted from and to unstructured
// objects (client-go's dynamic client): no generated clientset.
package reviewapi

import (
	"time"

	"github.com/example/cloud-provider-example/objectref"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API group and version.
const (
	Group   = "review.example.com"
	Version = "v1"
)

// Kinds and resources.
const (
	KindPlanApproval        = "PlanApproval"
	KindStateUnlock         = "StateUnlock"
	KindAddressRelease      = "AddressRelease"
	ResourcePlanApprovals   = "planapprovals"
	ResourceStateUnlocks    = "stateunlocks"
	ResourceAddressReleases = "addressreleases"
)

// GroupVersion and resources of the API.
var (
	GroupVersion    = schema.GroupVersion{Group: Group, Version: Version}
	PlanApprovals   = GroupVersion.WithResource(ResourcePlanApprovals)
	StateUnlocks    = GroupVersion.WithResource(ResourceStateUnlocks)
	AddressReleases = GroupVersion.WithResource(ResourceAddressReleases)
)

// AdmissionPolicy names the ValidatingAdmissionPolicy (and its binding)
// that checks the identity in every PlanApproval, StateUnlock and
// AddressRelease: the
// controller honours these objects only while both are installed.
const AdmissionPolicy = "review.example.com-identity"

// AuthorAnnotation, on a Service, names who last changed what the
// controller renders from it. The optional admission policy
// AuthorAdmissionPolicy makes the API server check it on every such change;
// only then does the controller trust it (and refuse that person's
// approval of their own change).
const (
	AuthorAnnotation      = "review.example.com/author"
	AuthorAdmissionPolicy = "review.example.com-service-author"
)

// Meta is the part of an object's metadata the controller reads.
type Meta struct {
	Name      string    `json:"name"`
	Namespace string    `json:"namespace"`
	UID       string    `json:"uid"`
	Created   time.Time `json:"created"`
}

// PlanApproval approves one saved plan of one object.
type PlanApproval struct {
	Meta
	Spec PlanApprovalSpec `json:"spec"`
}

// PlanApprovalSpec is immutable once created.
type PlanApprovalSpec struct {
	Object objectref.Ref `json:"object"`
	// PlanID is the approved plan: plan-<12 hex digits>.
	PlanID string `json:"planID"`
	// Approver is the user who created the object, as the API server
	// authenticated them (the admission policy checks it).
	Approver string `json:"approver"`
	// ApproverGroups are the approver's groups as the API server
	// authenticated them (the admission policy checks them): the
	// controller asks the API server whether the approver may edit an
	// input whose editor is unknown, and needs them to ask.
	ApproverGroups []string `json:"approverGroups,omitempty"`
	// Comment is free text for the audit trail.
	Comment string `json:"comment,omitempty"`
}

// StateUnlock asks the controller to force one state lock open, once.
type StateUnlock struct {
	Meta
	Spec StateUnlockSpec `json:"spec"`
}

// StateUnlockSpec is immutable once created.
type StateUnlockSpec struct {
	Object objectref.Ref `json:"object"`
	// LockID is the lock to force open (the record shows it).
	LockID string `json:"lockID"`
	// Requester is the user who created the object (checked as Approver).
	Requester string `json:"requester"`
	Comment   string `json:"comment,omitempty"`
}

// AddressRelease asks the controller to release a kept reserved address:
// to plan the destroy of its workspace, which gives the IP back to the
// region once another reviewer approves it.
type AddressRelease struct {
	Meta
	Spec AddressReleaseSpec `json:"spec"`
}

// AddressReleaseSpec is immutable once created.
type AddressReleaseSpec struct {
	// Address is the address's record: kind Address, the namespace that
	// owns it and its cloud name (k8s-a-...).
	Address objectref.Ref `json:"address"`
	// Requester is the user who created the object (checked as Approver).
	Requester string `json:"requester"`
	Comment   string `json:"comment,omitempty"`
}
