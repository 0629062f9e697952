package simulator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Regions and zones are read-only: they come from the seed only. Regions are
// stored by name; zones are looked up through their region.

func getRegion(tx *bolt.Tx, name string) (exampleapi.Region, bool, error) {
	var r exampleapi.Region
	ok, err := getJSON(tx.Bucket(bucketRegions), name, &r)
	return r, ok, err
}

func allRegions(tx *bolt.Tx) ([]exampleapi.Region, error) {
	var out []exampleapi.Region
	err := tx.Bucket(bucketRegions).ForEach(func(k, v []byte) error {
		var r exampleapi.Region
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("decoding region %q: %w", k, err)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// allZones lists every zone, ordered by name.
func allZones(tx *bolt.Tx) ([]exampleapi.Zone, error) {
	regions, err := allRegions(tx)
	if err != nil {
		return nil, err
	}
	var zones []exampleapi.Zone
	for _, r := range regions {
		for _, z := range r.Zones {
			zones = append(zones, exampleapi.Zone{Name: z, Region: r.Name})
		}
	}
	slices.SortFunc(zones, func(a, b exampleapi.Zone) int { return strings.Compare(a.Name, b.Name) })
	return zones, nil
}

// requireRegion checks that region exists, naming the accepted regions if not.
func requireRegion(tx *bolt.Tx, field, region string) error {
	if region == "" {
		return invalid(field, "is required")
	}
	_, ok, err := getRegion(tx, region)
	if err != nil || ok {
		return err
	}
	regions, err := allRegions(tx)
	if err != nil {
		return err
	}
	names := make([]string, len(regions))
	for i, r := range regions {
		names[i] = r.Name
	}
	return invalid(field, "unknown region %q (accepted: %s)", region, strings.Join(names, ", "))
}

// zoneRegion returns the region of zone, or a 400 naming the known zones.
func zoneRegion(tx *bolt.Tx, field, zone string) (string, error) {
	zones, err := allZones(tx)
	if err != nil {
		return "", err
	}
	names := make([]string, len(zones))
	for i, z := range zones {
		if z.Name == zone {
			return z.Region, nil
		}
		names[i] = z.Name
	}
	return "", invalid(field, "unknown zone %q (accepted: %s)", zone, strings.Join(names, ", "))
}
