package main

import (
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
	}
	for _, c := range cases {
		got, err := parseObject(c.arg, c.ns, "default")
		if err != nil || got != c.want {
			t.Errorf("parseObject(%q, -n %q) = %+v, %v; want %+v", c.arg, c.ns, got, err, c.want)
		}
		if col := objectColumn(got); col != c.arg && c.ns == "" && got.Kind != records.ObjectService {
			t.Errorf("objectColumn(%+v) = %q, want %q", got, col, c.arg)
		}
	}
}
