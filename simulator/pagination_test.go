package simulator_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
)

func TestPaginationWalksAllItems(t *testing.T) {
	c := startControl(t)
	const total = 23
	want := map[string]bool{}
	for i := range total {
		zone := "ex-west-1a"
		if i%3 == 0 {
			zone = "ex-east-1a"
		}
		want[c.createInstance(instanceReq(fmt.Sprintf("node-%02d", i), zone)).ID] = true
	}

	walk := func(query string, pageSize int) []string {
		var ids []string
		token := ""
		for pages := 0; ; pages++ {
			if pages > total {
				t.Fatalf("more pages than items")
			}
			q := fmt.Sprintf("/v1/instances?page_size=%d&%s", pageSize, query)
			if token != "" {
				q += "&page_token=" + url.QueryEscape(token)
			}
			var l exampleapi.ListResponse[exampleapi.Instance]
			c.must(http.StatusOK, "GET", q, nil, &l)
			if len(l.Items) > pageSize {
				t.Fatalf("page of %d items, page size %d", len(l.Items), pageSize)
			}
			if l.NextPageToken != "" && len(l.Items) != pageSize {
				t.Fatalf("short page (%d) with a next token", len(l.Items))
			}
			for _, it := range l.Items {
				ids = append(ids, it.ID)
			}
			if l.NextPageToken == "" {
				return ids
			}
			token = l.NextPageToken
		}
	}
	for _, size := range []int{1, 5, 7, 23, 100} {
		ids := walk("", size)
		if len(ids) != total || !slices.IsSorted(ids) {
			t.Fatalf("page size %d: %d ids (sorted %v)", size, len(ids), slices.IsSorted(ids))
		}
		for i, id := range ids {
			if !want[id] || (i > 0 && ids[i-1] == id) {
				t.Fatalf("page size %d: unexpected or duplicate id %s", size, id)
			}
		}
	}
	// Filters and pagination combine: 8 of the 23 are in ex-east-1.
	if ids := walk("region=ex-east-1", 3); len(ids) != 8 {
		t.Errorf("filtered walk found %d, want 8", len(ids))
	}
	// The default page holds everything here; an empty list is [] not null.
	resp := c.must(http.StatusOK, "GET", "/v1/load-balancers", nil, nil)
	if string(resp.body) != "{\"items\":[]}\n" {
		t.Errorf("empty list body %q", resp.body)
	}
}
