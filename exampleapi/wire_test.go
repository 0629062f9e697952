package exampleapi_test

import (
	"encoding/json"
	"flag"
	"hash/fnv"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
)

var update = flag.Bool("update", false, "rewrite testdata/wire.golden.json")

// wireGolden holds what the object types (and the load balancer's
// requests) marshal to, zero and with every field set: the API's wire form, which a change to how the Go types are
// declared (an embedded struct, a field moved) must keep.
const wireGolden = "testdata/wire.golden.json"

// TestWireForm: each object type marshals, zero and filled, to the
// members and values of the golden file (their order in an object is no
// part of JSON), and decodes from it back to the same value.
func TestWireForm(t *testing.T) {
	types := map[string]any{
		"Instance": exampleapi.Instance{}, "Network": exampleapi.Network{}, "LoadBalancer": exampleapi.LoadBalancer{},
		"TargetPool": exampleapi.TargetPool{}, "Address": exampleapi.Address{}, "Certificate": exampleapi.Certificate{},
		"LoadBalancerSpec": exampleapi.LoadBalancerSpec{}, "UpdateLoadBalancerRequest": exampleapi.UpdateLoadBalancerRequest{},
		"RuleSet": exampleapi.RuleSet{}, "PutRuleSetRequest": exampleapi.PutRuleSetRequest{},
	}
	got := map[string]any{}
	for name, zero := range types {
		full := reflect.New(reflect.TypeOf(zero)).Elem()
		fill(full, "")
		got[name+" zero"] = zero
		got[name+" full"] = full.Interface()
		back := reflect.New(full.Type())
		if err := json.Unmarshal(marshal(t, full.Interface()), back.Interface()); err != nil {
			t.Fatalf("decoding %s: %v", name, err)
		}
		if !reflect.DeepEqual(back.Elem().Interface(), full.Interface()) {
			t.Errorf("%s does not decode to what it was:\n got %+v\nwant %+v", name, back.Elem(), full)
		}
	}
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(wireGolden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(wireGolden)
	if err != nil {
		t.Fatal(err)
	}
	want, gotJSON := jsonObject(t, json.RawMessage(b)), jsonObject(t, got)
	for k, w := range want {
		if !reflect.DeepEqual(gotJSON[k], w) {
			t.Errorf("%s marshals to\n%s\nwant\n%s", k, marshal(t, gotJSON[k]), marshal(t, w))
		}
	}
	if len(gotJSON) != len(want) {
		t.Errorf("%d cases, the golden file has %d", len(gotJSON), len(want))
	}
}

// fill sets every field below v to a value that depends on the field's
// Go name alone (a string is its name, a number or time its name's
// hash), so that it stays the same whatever struct declares the field.
func fill(v reflect.Value, name string) {
	h := fnv.New32a()
	h.Write([]byte(name))
	n := int64(h.Sum32() % 100_000)
	switch v.Kind() {
	case reflect.String:
		v.SetString(name)
	case reflect.Int, reflect.Int64:
		v.SetInt(n)
	case reflect.Float64:
		v.SetFloat(float64(n) / 2)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), name)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), name)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, name+"Key")
		fill(e, name)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(1_700_000_000+n, 0).UTC()))
			return
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				fill(v.Field(i), f.Name)
			}
		}
	default:
		panic("fill: no value for " + v.Type().String())
	}
}
