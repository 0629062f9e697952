package testcluster

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
)

// User is a person for RBAC and admission tests: the apiserver
// authenticates them with a static bearer token (--token-auth-file) as
// Name, member of Groups, as an identity provider would. Unlike a
// ServiceAccount, a user can be put in any group, so bindings to a Group
// are tested as shipped.
type User struct {
	Name   string
	Groups []string
}

func (u User) validate() error {
	if u.Name == "" {
		return errors.New("user without a name")
	}
	if strings.HasPrefix(u.Name, "system:") {
		return fmt.Errorf("user %q: system: names belong to Kubernetes", u.Name)
	}
	for _, g := range u.Groups {
		// The token file separates groups with commas.
		if g == "" || strings.Contains(g, ",") {
			return fmt.Errorf("user %q: group %q is empty or has a comma", u.Name, g)
		}
	}
	return nil
}

// UserConfig returns a client config authenticating as a user of
// Options.Users.
func (c *Cluster) UserConfig(name string) (*rest.Config, error) {
	token, ok := c.userTokens[name]
	if !ok {
		return nil, fmt.Errorf("user %q is not in Options.Users", name)
	}
	return &rest.Config{
		Host:            c.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.caData},
	}, nil
}

// WriteUserKubeconfig writes a kubeconfig for a user of Options.Users, for
// tools and child processes, and returns its path (in Dir).
func (c *Cluster) WriteUserKubeconfig(name string) (string, error) {
	token, ok := c.userTokens[name]
	if !ok {
		return "", fmt.Errorf("user %q is not in Options.Users", name)
	}
	path := filepath.Join(c.Dir, fmt.Sprintf("user-%s.kubeconfig", sanitize(name)))
	if err := writeKubeconfig(path, c.URL, c.caData, name, token); err != nil {
		return "", err
	}
	return path, nil
}

// sanitize keeps a user name usable in a file name.
func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' {
			return r
		}
		return '_'
	}, name)
}
