package simulator

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

const (
	defaultPageSize = 100
	maxPageSize     = 1000
	// pageTokenPrefix versions the otherwise opaque token format.
	pageTokenPrefix = "v1:"
)

// page is a parsed ?page_size=&page_token= pair: at most size items whose
// key sorts after `after`.
type page struct {
	size  int
	after string
}

func parsePage(q url.Values) (page, error) {
	pg := page{size: defaultPageSize}
	if s := q.Get("page_size"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPageSize {
			return page{}, invalid("page_size", "%q is out of range (accepted: 1-%d)", s, maxPageSize)
		}
		pg.size = n
	}
	if t := q.Get("page_token"); t != "" {
		raw, err := base64.RawURLEncoding.DecodeString(t)
		if err != nil || !strings.HasPrefix(string(raw), pageTokenPrefix) {
			return page{}, invalid("page_token", "is not a token returned by a previous page")
		}
		pg.after = strings.TrimPrefix(string(raw), pageTokenPrefix)
	}
	return pg, nil
}

func pageToken(lastKey string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(pageTokenPrefix + lastKey))
}

// listBucket pages through an object bucket in key (id) order. decode turns
// a stored value into an item and reports whether it passes the filters.
// A next-page token is only given when another matching item exists, so the
// last page never carries one.
func listBucket[T any](b *bolt.Bucket, pg page, decode func(k, v []byte) (T, bool, error)) (exampleapi.ListResponse[T], error) {
	resp := exampleapi.ListResponse[T]{Items: []T{}}
	var lastKey string
	err := scanFrom(b, pg.after, func(k, v []byte) (bool, error) {
		item, ok, err := decode(k, v)
		if err != nil || !ok {
			return err == nil, err
		}
		if len(resp.Items) == pg.size {
			resp.NextPageToken = pageToken(lastKey)
			return false, nil
		}
		resp.Items = append(resp.Items, item)
		lastKey = string(k)
		return true, nil
	})
	return resp, err
}

// listSlice pages through items already sorted by key.
func listSlice[T any](items []T, pg page, key func(T) string) exampleapi.ListResponse[T] {
	resp := exampleapi.ListResponse[T]{Items: []T{}}
	for _, it := range items {
		if pg.after != "" && key(it) <= pg.after {
			continue
		}
		if len(resp.Items) == pg.size {
			resp.NextPageToken = pageToken(key(resp.Items[len(resp.Items)-1]))
			break
		}
		resp.Items = append(resp.Items, it)
	}
	return resp
}
