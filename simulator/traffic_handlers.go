package simulator

import (
	"net/http"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Traffic model handlers (connections.go, targethealth.go).

// handleOpenConnections is a create: the connections are new, and an
// Idempotency-Key makes a retry whose answer was lost count them once.
func (s *Server) handleOpenConnections(w http.ResponseWriter, r *http.Request) {
	lbID := r.PathValue("id")
	createFrom(s, w, r, validateOpenConnections, func(tx *bolt.Tx, req exampleapi.OpenConnectionsRequest) (created, error) {
		a, version, err := s.cloud.openConnections(tx, lbID, req.Count)
		return created{a, version, "/v1/load-balancers/" + lbID + "/connections"}, err
	})
}

func (s *Server) handleConnections(w http.ResponseWriter, r *http.Request) {
	conns, version, err := s.cloud.connections(r.PathValue("id"))
	s.object(w, conns, version, err)
}

func (s *Server) handleTargetHealth(w http.ResponseWriter, r *http.Request) {
	health, err := s.lbTargetHealth(r.PathValue("id"))
	s.answer(w, health, err)
}

// lbTargetHealth is load balancer id's target health, from the data
// plane's probes while it runs.
func (s *Server) lbTargetHealth(id string) (exampleapi.TargetHealthResponse, error) {
	health, err := s.cloud.targetHealth(id)
	if err == nil {
		if dp := s.dp.Load(); dp != nil {
			probed(&health, dp)
		}
	}
	return health, err
}

func (s *Server) handleTargetPoolHealth(w http.ResponseWriter, r *http.Request) {
	health, err := s.poolTargetHealth(r.PathValue("id"))
	s.answer(w, health, err)
}
