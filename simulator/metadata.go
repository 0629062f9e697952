package simulator

import (
	"errors"
	"net/http"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Metadata API handlers: what an instance (or a node agent on it) can learn
// about itself and its peers.

func (s *Server) metadata(w http.ResponseWriter, inst exampleapi.Instance, err error) {
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, instanceMetadata(inst))
}

func (s *Server) placement(w http.ResponseWriter, inst exampleapi.Instance, err error) {
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, exampleapi.Placement{Region: inst.Region, Zone: inst.Zone})
}

func (s *Server) handleMetadataInstance(w http.ResponseWriter, r *http.Request) {
	inst, err := s.cloud.getInstance(r.PathValue("id"))
	s.metadata(w, inst, err)
}

// handleMetadataInstanceSub serves /v1/instances/by-name/{name} and
// /v1/instances/{id}/placement.
func (s *Server) handleMetadataInstanceSub(w http.ResponseWriter, r *http.Request) {
	id, sub := r.PathValue("id"), r.PathValue("sub")
	switch {
	case id == "by-name":
		inst, err := s.cloud.instanceByName(sub, r.URL.Query().Get("region"))
		s.metadata(w, inst, err)
	case sub == "placement":
		inst, err := s.cloud.getInstance(id)
		s.placement(w, inst, err)
	default:
		s.fail(w, &APIError{Status: http.StatusNotFound, Code: exampleapi.CodeNotFound,
			Message: "no such endpoint: " + r.Method + " " + r.URL.Path})
	}
}

func (s *Server) handleMetadataSelf(w http.ResponseWriter, _ *http.Request) {
	inst, err := s.self()
	s.metadata(w, inst, err)
}

func (s *Server) handleMetadataSelfPlacement(w http.ResponseWriter, _ *http.Request) {
	inst, err := s.self()
	s.placement(w, inst, err)
}

// self resolves --self-instance, by id first and then by name.
func (s *Server) self() (exampleapi.Instance, error) {
	ref := s.cfg.SelfInstance
	if ref == "" {
		return exampleapi.Instance{}, &APIError{Status: http.StatusNotFound, Code: exampleapi.CodeNotFound,
			Message: "no self instance is configured (start the simulator with --self-instance)"}
	}
	inst, err := s.cloud.getInstance(ref)
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return s.cloud.instanceByName(ref, "")
	}
	return inst, err
}
