package simulator

import (
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

// validateCreateCertificate checks the request, the chain and that the key
// is the leaf's, and returns what the leaf says. No message quotes the key.
func validateCreateCertificate(req *exampleapi.CreateCertificateRequest) (exampleapi.CertificateInfo, error) {
	if err := validateNameRegion(req.Name, req.Region); err != nil {
		return exampleapi.CertificateInfo{}, err
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
			ObjectMeta: newMeta("cert-", req.Name, req.Region, c.now()), CertificatePEM: req.CertificatePEM,
			CertificateInfo: info, Tags: cloneTags(req.Tags),
		},
		PrivateKeyPEM: req.PrivateKeyPEM,
	}
	if err := putJSON(tx.Bucket(bucketCertificates), rec.ID, &rec); err != nil {
		return exampleapi.Certificate{}, err
	}
	return rec.view(), nil
}

func (c *cloud) getCertificate(id string) (exampleapi.Certificate, error) {
	return viewObject(c, func(tx *bolt.Tx) (exampleapi.Certificate, error) {
		rec, err := storedCertificates.get(tx, id)
		return rec.view(), err
	})
}

func (c *cloud) listCertificates(region, name string, pg page) (exampleapi.ListResponse[exampleapi.Certificate], error) {
	return listNamed(c, storedCertificates, pg, region, name, (*certRecord).view)
}

// deleteCertificate deletes a certificate that no listener references.
func (c *cloud) deleteCertificate(id, ifMatch string) error {
	return c.update(func(tx *bolt.Tx) error {
		if _, err := storedCertificates.getIfMatch(tx, id, ifMatch); err != nil {
			return err
		}
		users, err := certificateReferrers(tx, id)
		if err := unreferenced(users, err, "certificate %q is still used by %s; remove it from their https listeners (or "+
			"replace it with another certificate) or delete them first", id); err != nil {
			return err
		}
		return storedCertificates.drop(tx, id)
	})
}

// certificateReferrers lists, in id order, the load balancers with a
// listener using certificate id.
func certificateReferrers(tx *bolt.Tx, id string) ([]string, error) {
	return lbReferrers(tx, func(ref *listenerCertificates) bool {
		for _, l := range ref.Listeners {
			if slices.Contains(l.CertificateIDs, id) {
				return true
			}
		}
		return false
	})
}

// listenerCertificates is the part of a stored load balancer that uses
// certificates.
type listenerCertificates struct {
	Listeners []struct {
		CertificateIDs []string `json:"certificate_ids"`
	} `json:"listeners"`
}

// requireListenerCertificates checks that every certificate id of the
// listeners names a certificate of region.
func requireListenerCertificates(tx *bolt.Tx, listeners []exampleapi.Listener, region string) error {
	for i, l := range listeners {
		for j, id := range l.CertificateIDs {
			field := fmt.Sprintf("listeners[%d].certificate_ids[%d]", i, j)
			if err := storedCertificates.requireInRegion(tx, field, id, region); err != nil {
				return err
			}
		}
	}
	return nil
}
