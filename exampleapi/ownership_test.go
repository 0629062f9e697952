package exampleapi_test

import (
	"reflect"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
)

func TestOwnerConflicts(t *testing.T) {
	const cluster, uid = "k8s.example.com/cluster-id", "k8s.example.com/service-uid"
	keys := []string{uid, cluster}
	mine := map[string]string{cluster: "prod", uid: "u-1", "team": "web"}
	cases := []struct {
		name string
		want map[string]string
		got  map[string]string
		keys []string
		out  []string
	}{
		{"untagged object", mine, nil, keys, nil},
		{"same owner, other tags differ", mine, map[string]string{cluster: "prod", uid: "u-1", "team": "db"}, keys, nil},
		{"owner key partly set, same value", mine, map[string]string{cluster: "prod"}, keys, nil},
		{"no owner keys", mine, map[string]string{cluster: "other"}, nil, nil},
		{"other service", mine, map[string]string{cluster: "prod", uid: "u-9"}, keys,
			[]string{`tag "k8s.example.com/service-uid" is "u-9", not this configuration's "u-1"`}},
		{"other cluster and service, sorted by key", mine, map[string]string{uid: "u-9", cluster: "dev"}, keys, []string{
			`tag "k8s.example.com/cluster-id" is "dev", not this configuration's "prod"`,
			`tag "k8s.example.com/service-uid" is "u-9", not this configuration's "u-1"`,
		}},
		{"configuration without the owner tag", map[string]string{cluster: "prod"}, map[string]string{cluster: "prod", uid: "u-9"}, keys,
			[]string{`tag "k8s.example.com/service-uid" is "u-9", and this configuration sets no such tag`}},
		{"empty value is a value", mine, map[string]string{uid: ""}, keys,
			[]string{`tag "k8s.example.com/service-uid" is "", not this configuration's "u-1"`}},
		{"repeated key reported once", mine, map[string]string{uid: "u-9"}, []string{uid, uid},
			[]string{`tag "k8s.example.com/service-uid" is "u-9", not this configuration's "u-1"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := exampleapi.OwnerConflicts(c.want, c.got, c.keys); !reflect.DeepEqual(got, c.out) {
				t.Errorf("OwnerConflicts = %q, want %q", got, c.out)
			}
		})
	}
}
