package tfprovider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/example/cloud-provider-example/exampleapi"
)

// fieldResolver maps an API error field such as "listeners[1].port" to the
// attribute path it came from; ok is false when there is none.
type fieldResolver func(field string) (p path.Path, ok bool)

// addAPIError turns err into a diagnostic. A 400 whose field resolves lands
// on that attribute, so Terraform points at the offending line; credential
// problems get a hint; everything else keeps the API's message.
func addAPIError(diags *diag.Diagnostics, summary string, err error, resolve fieldResolver) {
	var apiErr *exampleapi.APIError
	switch {
	case errors.Is(err, context.Canceled):
		diags.AddError(summary, "The operation was cancelled (Terraform was interrupted) before it finished: "+err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		diags.AddError(summary, "The operation timed out: "+err.Error())
	case !errors.As(err, &apiErr):
		diags.AddError(summary, err.Error())
	case apiErr.StatusCode == http.StatusUnauthorized:
		diags.AddError(summary, err.Error()+"\n\nThe API rejected the token: check the provider's token or the "+EnvToken+" environment variable.")
	case apiErr.StatusCode == http.StatusForbidden:
		diags.AddError(summary, err.Error()+"\n\nThe token may not change this object; the read-only metadata token cannot be used by the provider.")
	case apiErr.StatusCode == http.StatusBadRequest && apiErr.Field != "" && resolve != nil:
		if p, ok := resolve(apiErr.Field); ok {
			diags.AddAttributeError(p, summary, apiErr.Message)
			return
		}
		diags.AddError(summary, err.Error())
	default:
		diags.AddError(summary, err.Error())
	}
}

// fieldStep is one dotted part of an API field: a name with an optional
// list index, e.g. "listeners[1]".
type fieldStep struct {
	name  string
	index int // -1 when absent
}

func parseAPIField(field string) ([]fieldStep, bool) {
	var steps []fieldStep
	for part := range strings.SplitSeq(field, ".") {
		st := fieldStep{name: part, index: -1}
		if i := strings.IndexByte(part, '['); i >= 0 {
			if !strings.HasSuffix(part, "]") {
				return nil, false
			}
			n, err := strconv.Atoi(part[i+1 : len(part)-1])
			if err != nil || n < 0 {
				return nil, false
			}
			st.name, st.index = part[:i], n
		}
		if st.name == "" {
			return nil, false
		}
		steps = append(steps, st)
	}
	return steps, len(steps) > 0
}

// listFieldResolver resolves fields onto attributes named like the API's
// fields (true of every resource here), indexing lists. roots lists the
// attributes it may resolve to; set-valued attributes need setValue to turn
// an index of the request's slice into the element's value.
func listFieldResolver(roots map[string]bool, setValue func(name string, index int) (path.Path, bool)) fieldResolver {
	return func(field string) (path.Path, bool) {
		steps, ok := parseAPIField(field)
		if !ok || !roots[steps[0].name] {
			return path.Empty(), false
		}
		var p path.Path
		for i, st := range steps {
			if i == 0 {
				p = path.Root(st.name)
			} else {
				p = p.AtName(st.name)
			}
			if st.index < 0 {
				continue
			}
			if i == 0 && setValue != nil {
				if sp, ok := setValue(st.name, st.index); ok {
					if sp.Equal(path.Root(st.name)) {
						// The element cannot be named: the diagnostic
						// lands on the whole attribute.
						return sp, true
					}
					p = sp
					continue
				}
			}
			p = p.AtListIndex(st.index)
		}
		return p, true
	}
}

// addWaitError reports a failed wait for object id. The object is already
// in state by then, so the message says what Terraform will do about it:
// after a create the object is tainted and replaced by the next apply.
func addWaitError(diags *diag.Diagnostics, summary, id string, err error, creating bool) {
	next := "It is kept in state; the next apply updates it again."
	if creating {
		next = "It is kept in state as tainted; the next apply replaces it."
	}
	var failed *lbFailedError
	switch {
	case errors.As(err, &failed):
		diags.AddError(summary, fmt.Sprintf("%s.\n\n%s", err, next))
	case errors.Is(err, errGone):
		diags.AddError(summary, fmt.Sprintf("%s: %s It was removed from state.", id, err))
	case errors.Is(err, context.Canceled):
		diags.AddError(summary, fmt.Sprintf("Terraform was interrupted while waiting for %s.\n\n%s", id, next))
	case errors.Is(err, context.DeadlineExceeded):
		diags.AddError(summary, fmt.Sprintf("Timed out waiting for %s (see the timeouts argument).\n\n%s", id, next))
	default:
		diags.AddError(summary, fmt.Sprintf("%s\n\n%s", err, next))
	}
}
