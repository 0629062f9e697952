package simulator

import (
	"encoding/json"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Certificates: an X.509 chain and its private key, served by the https
// listeners that reference them. The key is stored (a load balancer needs
// it to end TLS) but never answered: every read goes through view, which
// has no field for it.

const kindCertificate = "certificate"

// certRecord is a certificate as stored.
type certRecord struct {
	exampleapi.Certificate
	PrivateKeyPEM string `json:"private_key_pem"`
}

// view is the wire object: the record without its key.
func (r *certRecord) view() exampleapi.Certificate { return r.Certificate }

func getCertRecord(tx *bolt.Tx, id string) (certRecord, error) {
	var rec certRecord
	ok, err := getJSON(tx.Bucket(bucketCertificates), id, &rec)
	if err == nil && !ok {
		err = notFound(kindCertificate, id)
	}
	return rec, err
}

// validateCreateCertificate checks the request, the chain and that the key
// is the leaf's, and returns what the leaf says. No message quotes the key.
func validateCreateCertificate(req *exampleapi.CreateCertificateRequest) (exampleapi.CertificateInfo, error) {
	if err := validateName("name", req.Name); err != nil {
		return exampleapi.CertificateInfo{}, err
	}
	if req.Region == "" {
		return exampleapi.CertificateInfo{}, invalid("region", "is required")
	}
	info, err := exampleapi.InspectCertificate(req.CertificatePEM)
	if err != nil {
		return exampleapi.CertificateInfo{}, invalid("certificate_pem", "%v", err)
	}
	if err := exampleapi.CheckPrivateKey(req.CertificatePEM, req.PrivateKeyPEM); err != nil {
		return exampleapi.CertificateInfo{}, invalid("private_key_pem", "%v", err)
	}
	return info, validateTags("tags", req.Tags)
}

// createCertificate stores a certificate; req must have passed
// validateCreateCertificate, which gave info. Names are not unique: a
// rotation uploads the new certificate under the old one's name before the
// old one is deleted.
func (c *cloud) createCertificate(tx *bolt.Tx, req exampleapi.CreateCertificateRequest, info exampleapi.CertificateInfo) (exampleapi.Certificate, error) {
	if err := requireRegion(tx, "region", req.Region); err != nil {
		return exampleapi.Certificate{}, err
	}
	rec := certRecord{
		Certificate: exampleapi.Certificate{
			ID: newID("cert-"), Name: req.Name, Region: req.Region, CertificatePEM: req.CertificatePEM,
			CertificateInfo: info, Tags: cloneTags(req.Tags), CreatedAt: c.now(), Version: 1,
		},
		PrivateKeyPEM: req.PrivateKeyPEM,
	}
	if err := putJSON(tx.Bucket(bucketCertificates), rec.ID, &rec); err != nil {
		return exampleapi.Certificate{}, err
	}
	return rec.view(), nil
}

func (c *cloud) getCertificate(id string) (cert exampleapi.Certificate, err error) {
	err = c.view(func(tx *bolt.Tx) error {
		rec, err := getCertRecord(tx, id)
		cert = rec.view()
		return err
	})
	return cert, err
}

func (c *cloud) listCertificates(region, name string, pg page) (resp exampleapi.ListResponse[exampleapi.Certificate], err error) {
	err = c.view(func(tx *bolt.Tx) error {
		resp, err = listBucket(tx.Bucket(bucketCertificates), pg, func(k, v []byte) (exampleapi.Certificate, bool, error) {
			var rec certRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return exampleapi.Certificate{}, false, fmt.Errorf("decoding certificate %q: %w", k, err)
			}
			keep := (region == "" || rec.Region == region) && (name == "" || rec.Name == name)
			return rec.view(), keep, nil
		})
		return err
	})
	return resp, err
}

// deleteCertificate deletes a certificate that no listener references.
func (c *cloud) deleteCertificate(id, ifMatch string) error {
	return c.update(func(tx *bolt.Tx) error {
		rec, err := getCertRecord(tx, id)
		if err != nil {
			return err
		}
		if err := checkIfMatch(ifMatch, rec.Version); err != nil {
			return err
		}
		users, err := certificateReferrers(tx, id)
		if err != nil {
			return err
		}
		if len(users) > 0 {
			return conflict("certificate %q is still used by %s; remove it from their https listeners (or "+
				"replace it with another certificate) or delete them first", id, describeReferrers(users))
		}
		if err := tx.Bucket(bucketCertificates).Delete([]byte(id)); err != nil {
			return fmt.Errorf("deleting certificate %s: %w", id, err)
		}
		return nil
	})
}

// certificateReferrers lists, in id order, the load balancers with a
// listener using certificate id; like poolReferrers, a scan.
func certificateReferrers(tx *bolt.Tx, id string) ([]string, error) {
	var users []string
	err := tx.Bucket(bucketLBs).ForEach(func(k, v []byte) error {
		var ref struct {
			Listeners []struct {
				CertificateIDs []string `json:"certificate_ids"`
			} `json:"listeners"`
		}
		if err := json.Unmarshal(v, &ref); err != nil {
			return fmt.Errorf("decoding load balancer %q: %w", k, err)
		}
		for _, l := range ref.Listeners {
			if slices.Contains(l.CertificateIDs, id) {
				users = append(users, string(k))
				break
			}
		}
		return nil
	})
	return users, err
}

// requireListenerCertificates checks that every certificate id of the
// listeners names a certificate of region.
func requireListenerCertificates(tx *bolt.Tx, listeners []exampleapi.Listener, region string) error {
	for i, l := range listeners {
		for j, id := range l.CertificateIDs {
			field := fmt.Sprintf("listeners[%d].certificate_ids[%d]", i, j)
			var rec certRecord
			ok, err := getJSON(tx.Bucket(bucketCertificates), id, &rec)
			switch {
			case err != nil:
				return err
			case !ok:
				return invalid(field, "certificate %q does not exist", id)
			case rec.Region != region:
				return invalid(field, "certificate %q is in region %s, not %s", id, rec.Region, region)
			}
		}
	}
	return nil
}
