package reviewpage

import (
	"reflect"
	"testing"
)

const mainV1 = `module "load_balancer" {
  source = "./modules/loadbalancer"
  internal = false
  listeners = [
    {
      protocol       = "tcp"
      port           = 80
      target_port    = 30080
      proxy_protocol = false
    },
    {
      protocol       = "udp"
      port           = 53
      target_port    = 30053
      proxy_protocol = false
    },
  ]
}
`

const mainV2 = `module "load_balancer" {
  source = "./modules/loadbalancer"
  internal = true
  listeners = [
    {
      protocol       = "tcp"
      port           = 80
      target_port    = 30081
      proxy_protocol = false
    },
    {
      protocol       = "tcp"
      port           = 443
      target_port    = 30443
      proxy_protocol = false
    },
  ]
}
`

func TestListenerChanges(t *testing.T) {
	got, err := listenerChanges(map[string]string{"main.tf": mainV1}, map[string]string{"main.tf": mainV2})
	if err != nil {
		t.Fatal(err)
	}
	want := []ListenerChange{
		{Key: "tcp/443", Action: "added"},
		{Key: "tcp/80", Action: "changed", Details: []string{"target_port: 30080 → 30081"}},
		{Key: "udp/53", Action: "removed"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("listenerChanges =\n%v\nwant\n%v", got, want)
	}
	gw := `module "gateway" {
  listeners = {
    "http/80" = { protocol = "http", port = 80 }
  }
}
`
	got, err = listenerChanges(nil, map[string]string{"main.tf": gw})
	if err != nil || !reflect.DeepEqual(got, []ListenerChange{{Key: "http/80", Action: "added"}}) {
		t.Errorf("a Gateway's map of listeners: %v, %v", got, err)
	}
	if _, err := listenerChanges(nil, map[string]string{"main.tf": "module {"}); err == nil {
		t.Error("an unparsable file gave no error")
	}
}

func TestHCLDiff(t *testing.T) {
	d := hclDiff(map[string]string{"main.tf": mainV1}, map[string]string{"main.tf": mainV2})
	var kinds = map[string]int{}
	for _, l := range d {
		kinds[l.Kind]++
	}
	if kinds["file"] != 2 || kinds["hunk"] == 0 || kinds["add"] == 0 || kinds["del"] == 0 {
		t.Errorf("diff kinds %v:\n%v", kinds, d)
	}
	if d[0].Text != "--- applied/main.tf" || d[1].Text != "+++ planned/main.tf" {
		t.Errorf("diff starts %q, %q", d[0].Text, d[1].Text)
	}
	if d := hclDiff(map[string]string{"main.tf": mainV1}, map[string]string{"main.tf": mainV1}); len(d) != 0 {
		t.Errorf("equal files diff: %v", d)
	}
}
