package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Control API handlers: decode, call one operation, encode. The rules live
// in the operations (instances.go, networks.go, loadbalancers.go,
// targetpools.go, addresses.go, certificates.go).

func (s *Server) fail(w http.ResponseWriter, err error) { writeError(w, s.log, err) }

// decode reads the body into v; on failure it answers and reports false.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) ([]byte, bool) {
	body, err := readBody(w, r)
	if err == nil {
		err = decodeJSON(body, v)
	}
	if err != nil {
		s.fail(w, err)
		return nil, false
	}
	return body, true
}

// created is what a create operation made.
type created struct {
	value    any
	version  int64
	location string
}

// create runs a create operation in one write transaction together with the
// Idempotency-Key bookkeeping, and answers 201 (or the recorded answer of
// an earlier request with the same key).
func (s *Server) create(w http.ResponseWriter, r *http.Request, body []byte, op func(tx *bolt.Tx) (created, error)) {
	key := r.Header.Get("Idempotency-Key")
	if len(key) > maxIdempotencyKey {
		s.fail(w, invalid("Idempotency-Key", "is longer than %d characters", maxIdempotencyKey))
		return
	}
	scope := idempotencyScope(infoFrom(r.Context()).tokenID, r.URL.Path, key)
	var answer idempotencyRecord
	replayed := false
	err := s.cloud.update(func(tx *bolt.Tx) error {
		now := s.cloud.now()
		if key != "" {
			rec, ok, err := lookupIdempotency(tx, scope, now)
			if err != nil {
				return err
			}
			if ok {
				if rec.RequestHash != requestHash(body) {
					return conflict("Idempotency-Key %q was already used for a different request", key)
				}
				answer, replayed = rec, true
				return nil
			}
		}
		c, err := op(tx)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(c.value)
		if err != nil {
			return fmt.Errorf("encoding response: %w", err)
		}
		answer = idempotencyRecord{Status: http.StatusCreated, Body: raw, ETag: etag(c.version),
			Location: c.location, RequestHash: requestHash(body), CreatedAt: now}
		if key == "" {
			return nil
		}
		return putIdempotency(tx, scope, answer)
	})
	if err != nil {
		s.fail(w, err)
		return
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.Header().Set("ETag", answer.ETag)
	w.Header().Set("Location", answer.Location)
	writeRawJSON(w, answer.Status, answer.Body)
}

func (s *Server) object(w http.ResponseWriter, v any, version int64, err error) {
	if err != nil {
		s.fail(w, err)
		return
	}
	writeObject(w, http.StatusOK, v, version)
}

// answer writes v (200), a listing or a view without a version of its
// own, or err.
func (s *Server) answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) noContent(w http.ResponseWriter, err error) {
	if err != nil {
		s.fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// createFrom answers a create: it decodes the request, validates it and
// runs op in the create transaction (see create).
func createFrom[Req any](s *Server, w http.ResponseWriter, r *http.Request, validate func(*Req) error,
	op func(tx *bolt.Tx, req Req) (created, error)) {
	var req Req
	body, ok := s.decode(w, r, &req)
	if !ok {
		return
	}
	if err := validate(&req); err != nil {
		s.fail(w, err)
		return
	}
	s.create(w, r, body, func(tx *bolt.Tx) (created, error) { return op(tx, req) })
}

// listByQuery answers a listing filtered by the query's parameters.
func listByQuery[T any](s *Server, w http.ResponseWriter, r *http.Request, list func(q url.Values, pg page) (T, error)) {
	q := r.URL.Query()
	pg, err := parsePage(q)
	if err != nil {
		s.fail(w, err)
		return
	}
	resp, err := list(q, pg)
	s.answer(w, resp, err)
}

// updateFrom answers an update of the object {id}: it decodes the
// request, validates it (unless validate is nil: the operation checks) and
// runs update under the request's If-Match; version reads the answer's
// version, for its ETag.
func updateFrom[Req any, T exampleapi.Object](s *Server, w http.ResponseWriter, r *http.Request, validate func(*Req) error,
	update func(id, ifMatch string, req Req) (T, error)) {
	var req Req
	if _, ok := s.decode(w, r, &req); !ok {
		return
	}
	if validate != nil {
		if err := validate(&req); err != nil {
			s.fail(w, err)
			return
		}
	}
	obj, err := update(r.PathValue("id"), r.Header.Get("If-Match"), req)
	s.object(w, obj, obj.Meta().Version, err)
}

// Regions and zones.

func (s *Server) handleListRegions(w http.ResponseWriter, r *http.Request) {
	pg, err := parsePage(r.URL.Query())
	if err != nil {
		s.fail(w, err)
		return
	}
	var regions []exampleapi.Region
	err = s.cloud.view(func(tx *bolt.Tx) (err error) {
		regions, err = allRegions(tx)
		return err
	})
	s.answer(w, listSlice(regions, pg, func(r exampleapi.Region) string { return r.Name }), err)
}

func (s *Server) handleListZones(w http.ResponseWriter, r *http.Request) {
	pg, err := parsePage(r.URL.Query())
	if err != nil {
		s.fail(w, err)
		return
	}
	region := r.URL.Query().Get("region")
	var zones []exampleapi.Zone
	err = s.cloud.view(func(tx *bolt.Tx) error {
		all, err := allZones(tx)
		for _, z := range all {
			if region == "" || z.Region == region {
				zones = append(zones, z)
			}
		}
		return err
	})
	s.answer(w, listSlice(zones, pg, func(z exampleapi.Zone) string { return z.Name }), err)
}

// Instances.

func (s *Server) handleCreateInstance(w http.ResponseWriter, r *http.Request) {
	createFrom(s, w, r, validateCreateInstance, func(tx *bolt.Tx, req exampleapi.CreateInstanceRequest) (created, error) {
		inst, err := s.cloud.createInstance(tx, req)
		return created{inst, inst.Version, "/v1/instances/" + inst.ID}, err
	})
}

func (s *Server) handleListInstances(w http.ResponseWriter, r *http.Request) {
	pg, err := parsePage(r.URL.Query())
	if err != nil {
		s.fail(w, err)
		return
	}
	f, err := parseInstanceFilter(r.URL.Query())
	if err != nil {
		s.fail(w, err)
		return
	}
	resp, err := s.cloud.listInstances(f, pg)
	s.answer(w, resp, err)
}

func (s *Server) handleGetInstance(w http.ResponseWriter, r *http.Request) {
	inst, err := s.cloud.getInstance(r.PathValue("id"))
	s.object(w, inst, inst.Version, err)
}

func (s *Server) handleSetInstanceTags(w http.ResponseWriter, r *http.Request) {
	updateFrom(s, w, r, nil, func(id, ifMatch string, req exampleapi.UpdateInstanceTagsRequest) (exampleapi.Instance, error) {
		return s.cloud.setInstanceTags(id, ifMatch, req.Tags)
	})
}

func (s *Server) handleSetInstanceState(w http.ResponseWriter, r *http.Request) {
	updateFrom(s, w, r, nil, func(id, ifMatch string, req exampleapi.SetInstanceStateRequest) (exampleapi.Instance, error) {
		return s.cloud.setInstanceState(id, ifMatch, req.State)
	})
}

func (s *Server) handleDeleteInstance(w http.ResponseWriter, r *http.Request) {
	s.noContent(w, s.cloud.deleteInstance(r.PathValue("id"), r.Header.Get("If-Match")))
}

// Networks (their routes below), load balancers, target pools and
// certificates are served alike; see objectAPI.

// objectAPI is how the control API serves a top-level kind of object T at
// path: create (when set, from a validated C), list by ?region= and
// ?name= (or, with query, by the filters it reads), get, update (when
// set, from a validated U) and delete. The kinds differ only in these
// operations.
type objectAPI[T exampleapi.Object, C, U any] struct {
	path string // e.g. "/v1/networks"

	validateCreate func(*C) error
	create         func(tx *bolt.Tx, req C) (T, error)
	list           func(region, name string, pg page) (exampleapi.ListResponse[T], error)
	// query, when set instead of list, reads the listing's filters
	// itself, for a kind that has more than region and name.
	query          func(q url.Values, pg page) (exampleapi.ListResponse[T], error)
	get            func(id string) (T, error)
	validateUpdate func(*U) error
	update         func(id, ifMatch string, req U) (T, error)
	delete         func(id, ifMatch string) error
}

// serve registers the routes of a on api.
func (a objectAPI[T, C, U]) serve(s *Server, api func(pattern string, h http.HandlerFunc)) {
	item := a.path + "/{id}"
	if a.create != nil {
		api("POST "+a.path, func(w http.ResponseWriter, r *http.Request) {
			createFrom(s, w, r, a.validateCreate, func(tx *bolt.Tx, req C) (created, error) {
				obj, err := a.create(tx, req)
				return created{obj, obj.Meta().Version, a.path + "/" + obj.Meta().ID}, err
			})
		})
	}
	query := a.query
	if query == nil {
		query = func(q url.Values, pg page) (exampleapi.ListResponse[T], error) {
			return a.list(q.Get("region"), q.Get("name"), pg)
		}
	}
	api("GET "+a.path, func(w http.ResponseWriter, r *http.Request) { listByQuery(s, w, r, query) })
	api("GET "+item, func(w http.ResponseWriter, r *http.Request) {
		obj, err := a.get(r.PathValue("id"))
		s.object(w, obj, obj.Meta().Version, err)
	})
	if a.update != nil {
		api("PUT "+item, func(w http.ResponseWriter, r *http.Request) {
			updateFrom(s, w, r, a.validateUpdate, a.update)
		})
	}
	api("DELETE "+item, func(w http.ResponseWriter, r *http.Request) {
		s.noContent(w, a.delete(r.PathValue("id"), r.Header.Get("If-Match")))
	})
}

// serveObjects registers the routes of networks, load balancers, target
// pools, addresses and certificates on api.
func (s *Server) serveObjects(api func(pattern string, h http.HandlerFunc)) {
	objectAPI[exampleapi.Network, exampleapi.CreateNetworkRequest, struct{}]{path: "/v1/networks",
		validateCreate: validateCreateNetwork, create: s.cloud.createNetwork,
		list: s.cloud.listNetworks, get: s.cloud.getNetwork, delete: s.cloud.deleteNetwork,
	}.serve(s, api)
	objectAPI[exampleapi.LoadBalancer, exampleapi.LoadBalancerSpec, exampleapi.UpdateLoadBalancerRequest]{path: "/v1/load-balancers",
		validateCreate: validateCreateLoadBalancer, create: s.cloud.createLoadBalancer,
		validateUpdate: validateLoadBalancerMutable, update: s.cloud.updateLoadBalancer,
		list: s.cloud.listLoadBalancers, get: s.cloud.getLoadBalancer, delete: s.cloud.deleteLoadBalancer,
	}.serve(s, api)
	objectAPI[exampleapi.TargetPool, exampleapi.CreateTargetPoolRequest, exampleapi.UpdateTargetPoolRequest]{path: "/v1/target-pools",
		validateCreate: validateCreateTargetPool, create: s.cloud.createTargetPool,
		validateUpdate: validateUpdateTargetPool, update: s.cloud.updateTargetPool,
		list: s.cloud.listTargetPools, get: s.cloud.getTargetPool, delete: s.cloud.deleteTargetPool,
	}.serve(s, api)
	objectAPI[exampleapi.Address, exampleapi.CreateAddressRequest, exampleapi.UpdateAddressRequest]{path: "/v1/addresses",
		validateCreate: validateCreateAddress, create: s.cloud.createAddress,
		validateUpdate: validateUpdateAddress, update: s.cloud.updateAddress,
		query: s.cloud.listAddresses, get: s.cloud.getAddress, delete: s.cloud.deleteAddress,
	}.serve(s, api)
	// A certificate's create also keeps what validation parsed (below).
	objectAPI[exampleapi.Certificate, struct{}, struct{}]{path: "/v1/certificates",
		list: s.cloud.listCertificates, get: s.cloud.getCertificate, delete: s.cloud.deleteCertificate,
	}.serve(s, api)
	api("POST /v1/certificates", s.handleCreateCertificate)

	api("POST /v1/networks/{id}/routes", s.handleCreateRoute)
	api("GET /v1/networks/{id}/routes", s.handleListRoutes)
	api("GET /v1/networks/{id}/routes/{route_id}", s.handleGetRoute)
	api("DELETE /v1/networks/{id}/routes/{route_id}", s.handleDeleteRoute)

	api("PUT /v1/load-balancers/{id}/rule-sets/{name}", s.handlePutRuleSet)
	api("GET /v1/load-balancers/{id}/rule-sets", s.handleListRuleSets)
	api("GET /v1/load-balancers/{id}/rule-sets/{name}", s.handleGetRuleSet)
	api("DELETE /v1/load-balancers/{id}/rule-sets/{name}", s.handleDeleteRuleSet)
}

// Rule sets: a PUT creates (201) or replaces (200) one.

func (s *Server) handlePutRuleSet(w http.ResponseWriter, r *http.Request) {
	var req exampleapi.PutRuleSetRequest
	if _, ok := s.decode(w, r, &req); !ok {
		return
	}
	name := r.PathValue("name")
	if err := validateRuleSet(name, &req); err != nil {
		s.fail(w, err)
		return
	}
	rs, created, err := s.cloud.putRuleSet(r.PathValue("id"), name, r.Header.Get("If-Match"), req)
	if err != nil || !created {
		s.object(w, rs, rs.Version, err)
		return
	}
	w.Header().Set("Location", r.URL.Path)
	writeObject(w, http.StatusCreated, rs, rs.Version)
}

func (s *Server) handleListRuleSets(w http.ResponseWriter, r *http.Request) {
	listByQuery(s, w, r, func(_ url.Values, pg page) (exampleapi.ListResponse[exampleapi.RuleSet], error) {
		return s.cloud.listRuleSets(r.PathValue("id"), pg)
	})
}

func (s *Server) handleGetRuleSet(w http.ResponseWriter, r *http.Request) {
	rs, err := s.cloud.getRuleSet(r.PathValue("id"), r.PathValue("name"))
	s.object(w, rs, rs.Version, err)
}

func (s *Server) handleDeleteRuleSet(w http.ResponseWriter, r *http.Request) {
	s.noContent(w, s.cloud.deleteRuleSet(r.PathValue("id"), r.PathValue("name"), r.Header.Get("If-Match")))
}

// Routes.

func (s *Server) handleCreateRoute(w http.ResponseWriter, r *http.Request) {
	networkID := r.PathValue("id")
	createFrom(s, w, r, validateCreateRoute, func(tx *bolt.Tx, req exampleapi.CreateRouteRequest) (created, error) {
		rt, err := s.cloud.createRoute(tx, networkID, req)
		// Routes have no version; the ETag is that of a new object.
		return created{rt, 1, "/v1/networks/" + networkID + "/routes/" + rt.ID}, err
	})
}

func (s *Server) handleListRoutes(w http.ResponseWriter, r *http.Request) {
	pg, err := parsePage(r.URL.Query())
	if err != nil {
		s.fail(w, err)
		return
	}
	resp, err := s.cloud.listRoutes(r.PathValue("id"), pg)
	s.answer(w, resp, err)
}

func (s *Server) handleGetRoute(w http.ResponseWriter, r *http.Request) {
	rt, err := s.cloud.getRoute(r.PathValue("id"), r.PathValue("route_id"))
	s.object(w, rt, 1, err)
}

func (s *Server) handleDeleteRoute(w http.ResponseWriter, r *http.Request) {
	s.noContent(w, s.cloud.deleteRoute(r.PathValue("id"), r.PathValue("route_id")))
}

// handleCreateCertificate is the certificates' create: validation parses
// the chain and key once, and the operation stores what it found.
func (s *Server) handleCreateCertificate(w http.ResponseWriter, r *http.Request) {
	var info exampleapi.CertificateInfo
	validate := func(req *exampleapi.CreateCertificateRequest) (err error) {
		info, err = validateCreateCertificate(req)
		return err
	}
	createFrom(s, w, r, validate, func(tx *bolt.Tx, req exampleapi.CreateCertificateRequest) (created, error) {
		cert, err := s.cloud.createCertificate(tx, req, info)
		return created{cert, cert.Version, "/v1/certificates/" + cert.ID}, err
	})
}
