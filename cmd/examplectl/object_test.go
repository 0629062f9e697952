package main

import (
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/records"
)

func TestParseObject(t *testing.T) {
	cases := []struct {
		arg, ns string
		want    records.ObjectRef
	}{
		{"routes", "", records.ObjectRef{Kind: records.ObjectRouteSet, Name: records.RouteSetName}},
		{"pools", "", records.ObjectRef{Kind: records.ObjectTargetPools, Name: records.RouteSetName}},
		{"pools", "shop", records.ObjectRef{Kind: records.ObjectService, Namespace: "shop", Name: "pools"}},
		{"shop/web", "", records.ObjectRef{Kind: records.ObjectService, Namespace: "shop", Name: "web"}},
		{"web", "", records.ObjectRef{Kind: records.ObjectService, Namespace: "default", Name: "web"}},
		{"group:shop/front", "", records.ObjectRef{Kind: records.ObjectServiceGroup, Namespace: "shop", Name: "front"}},
		{"group:front", "shop", records.ObjectRef{Kind: records.ObjectServiceGroup, Namespace: "shop", Name: "front"}},
		{"group:front", "", records.ObjectRef{Kind: records.ObjectServiceGroup, Namespace: "default", Name: "front"}},
	}
	for _, c := range cases {
		got, err := parseObject(c.arg, c.ns, "default")
		if err != nil || got != c.want {
			t.Errorf("parseObject(%q, -n %q) = %+v, %v; want %+v", c.arg, c.ns, got, err, c.want)
		}
		if col := objectColumn(got); col != c.arg && c.ns == "" && got.Kind != records.ObjectService && got.Namespace != "default" {
			t.Errorf("objectColumn(%+v) = %q, want %q", got, col, c.arg)
		}
	}
	for _, bad := range []string{"group:", "group:a/b/c", "group:/front"} {
		if _, err := parseObject(bad, "", "default"); err == nil || !strings.Contains(err.Error(), "is not a load balancer group") {
			t.Errorf("parseObject(%q): %v", bad, err)
		}
	}
}
