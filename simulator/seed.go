package simulator

import (
	"fmt"
	"os"
	"slices"

	bolt "go.etcd.io/bbolt"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Seed is the initial content of the cloud: the read-only regions and zones,
// and optionally networks and instances. Networks and instances use the
// same fields as their create requests. Applying a seed is idempotent:
// objects whose name already exists in their region are left alone (a
// region that exists gains the seed's missing zones), so restarting with the
// same seed is safe.
type Seed struct {
	Regions   []exampleapi.Region                `json:"regions"`
	Networks  []exampleapi.CreateNetworkRequest  `json:"networks,omitempty"`
	Instances []exampleapi.CreateInstanceRequest `json:"instances,omitempty"`
}

// DefaultSeed is what a fresh simulator starts with when no seed is given.
func DefaultSeed() *Seed {
	return &Seed{
		Regions: []exampleapi.Region{
			{Name: "ex-west-1", Zones: []string{"ex-west-1a", "ex-west-1b", "ex-west-1c"}},
			{Name: "ex-east-1", Zones: []string{"ex-east-1a"}},
		},
		Networks: []exampleapi.CreateNetworkRequest{
			{Name: "default", Region: "ex-west-1", CIDR: "10.0.0.0/16", IPv6CIDR: "fd00:10::/48"},
			{Name: "default", Region: "ex-east-1", CIDR: "10.1.0.0/16"},
		},
	}
}

// ParseSeed parses a YAML (or JSON) seed; unknown fields are errors so a
// typo does not silently drop part of the seed.
func ParseSeed(data []byte) (*Seed, error) {
	var s Seed
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("parsing seed: %w", err)
	}
	return &s, nil
}

// LoadSeed reads and parses a seed file.
func LoadSeed(path string) (*Seed, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading seed: %w", err)
	}
	s, err := ParseSeed(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// applySeed applies s in one transaction. With s == nil the default seed is
// applied, but only to an empty store, so restarting without --seed keeps
// whatever an earlier seed created.
func (c *cloud) applySeed(s *Seed) error {
	return c.update(func(tx *bolt.Tx) error {
		if s == nil {
			if k, _ := tx.Bucket(bucketRegions).Cursor().First(); k != nil {
				return nil
			}
			s = DefaultSeed()
		}
		if err := seedRegions(tx, s.Regions); err != nil {
			return err
		}
		for i, req := range s.Networks {
			if err := validateCreateNetwork(&req); err != nil {
				return fmt.Errorf("seed: networks[%d]: %w", i, err)
			}
			if lookupName(tx, kindNetwork, req.Region, req.Name) != "" {
				continue
			}
			if _, err := c.createNetwork(tx, req); err != nil {
				return fmt.Errorf("seed: networks[%d]: %w", i, err)
			}
		}
		for i, req := range s.Instances {
			if err := validateCreateInstance(&req); err != nil {
				return fmt.Errorf("seed: instances[%d]: %w", i, err)
			}
			region, err := zoneRegion(tx, "zone", req.Zone)
			if err != nil {
				return fmt.Errorf("seed: instances[%d]: %w", i, err)
			}
			if lookupName(tx, kindInstance, region, req.Name) != "" {
				continue
			}
			if _, err := c.createInstance(tx, req); err != nil {
				return fmt.Errorf("seed: instances[%d]: %w", i, err)
			}
		}
		return nil
	})
}

func seedRegions(tx *bolt.Tx, regions []exampleapi.Region) error {
	zoneOwner := map[string]string{}
	existing, err := allRegions(tx)
	if err != nil {
		return err
	}
	for _, r := range existing {
		for _, z := range r.Zones {
			zoneOwner[z] = r.Name
		}
	}
	for i, r := range regions {
		field := fmt.Sprintf("seed: regions[%d]", i)
		if err := validateName("name", r.Name); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		if len(r.Zones) == 0 {
			return fmt.Errorf("%s: region %s has no zones", field, r.Name)
		}
		cur, ok, err := getRegion(tx, r.Name)
		if err != nil {
			return err
		}
		if !ok {
			cur = exampleapi.Region{Name: r.Name}
		}
		for _, z := range r.Zones {
			if err := validateName("zones", z); err != nil {
				return fmt.Errorf("%s: %w", field, err)
			}
			if owner, taken := zoneOwner[z]; taken && owner != r.Name {
				return fmt.Errorf("%s: zone %s already belongs to region %s", field, z, owner)
			}
			zoneOwner[z] = r.Name
			if !slices.Contains(cur.Zones, z) {
				cur.Zones = append(cur.Zones, z)
			}
		}
		if err := putJSON(tx.Bucket(bucketRegions), cur.Name, cur); err != nil {
			return err
		}
	}
	return nil
}
