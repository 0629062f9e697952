package tfprovider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

// The steps of Create, Read, Update and Delete that the resources share.

// objectTimeout bounds one operation, retries included, on an object the
// cloud makes at once: certificates, target pools and routes have no
// provisioning phase to wait for.
const objectTimeout = 5 * time.Minute

// lostAnswer is how a create finds the object that a request whose answer
// was lost may have made.
type lostAnswer[T any] struct {
	// find looks for the object; start is when the create started.
	find func(ctx context.Context, start time.Time) *T
	// taking says what is done with it, e.g. "adopting the load balancer
	// found by name"; the warning logs its id under idKey.
	taking string
	idKey  string
	id     func(*T) string
}

// lostNamed is the lostAnswer of a kind (e.g. "target pool") of named
// object: of those list finds, the one created since the create started,
// less a minute of slack for the cloud's clock against ours. None, or
// several, is none.
func lostNamed[T any](kind, taking string, list func(context.Context) ([]T, error), named func(*T) namedObject) lostAnswer[T] {
	return lostAnswer[T]{
		find: func(ctx context.Context, start time.Time) *T {
			found, err := list(ctx)
			if err != nil {
				return nil
			}
			found = slices.DeleteFunc(found, func(o T) bool { return named(&o).CreatedAt.Before(start.Add(-time.Minute)) })
			if len(found) != 1 {
				return nil
			}
			return &found[0]
		},
		taking: taking,
		idKey:  idKey(kind),
		id:     func(o *T) string { return named(o).ID },
	}
}

// createDetached runs post detached from cancellation, bounded by timeout:
// abandoning a create half-way could make an object whose id Terraform
// never learns. If every retry failed without an answer, one may still
// have been processed: the object lost.find finds is then ours.
func createDetached[T any](ctx context.Context, timeout time.Duration, post func(context.Context) (*T, error), lost lostAnswer[T]) (*T, error) {
	postCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	start := time.Now()
	obj, err := post(postCtx)
	if err == nil || !answerMayBeLost(err) {
		return obj, err
	}
	found := lost.find(postCtx, start)
	if found == nil {
		return nil, err
	}
	tflog.Warn(ctx, "create answer was lost; "+lost.taking, map[string]any{lost.idKey: lost.id(found), "error": err.Error()})
	return found, nil
}

// answerMayBeLost reports errors after which the server may still have
// processed the request: no answer at all, or a 5xx.
func answerMayBeLost(err error) bool {
	var apiErr *exampleapi.APIError
	if !errors.As(err, &apiErr) {
		return true
	}
	return apiErr.StatusCode >= http.StatusInternalServerError
}

// refresh is Read for a resource whose state (model M) is built from the
// cloud's object (T, of kind e.g. "target pool"): get fetches the object
// of the state's id, fromAPI makes the new state of it and the prior one.
// An object gone is removed from state, so it is planned for creation.
// Before the provider is configured (data nil), the state is kept as it is.
func refresh[M, T any](ctx context.Context, data *providerData, req resource.ReadRequest, resp *resource.ReadResponse, kind string,
	get func(*exampleapi.Client, context.Context, string) (*T, error), fromAPI func(*T, M) (M, diag.Diagnostics)) {
	var state M
	var id string
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	if resp.Diagnostics.HasError() || data == nil {
		return
	}
	ctx = tflog.SetField(ctx, idKey(kind), id)
	obj, err := get(data.client, ctx, id)
	if exampleapi.IsNotFound(err) {
		tflog.Warn(ctx, kind+" not found; removing it from state so it is planned for creation")
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot read "+kind+" "+id, err, nil)
		return
	}
	setFromAPI(ctx, &resp.State, &resp.Diagnostics, obj, state, fromAPI)
}

// setFromAPI sets state to the model fromAPI makes of obj, the cloud's
// object; prior (plan or state) supplies what the API does not know.
func setFromAPI[M, T any](ctx context.Context, state *tfsdk.State, diags *diag.Diagnostics, obj *T, prior M,
	fromAPI func(*T, M) (M, diag.Diagnostics)) {
	m, d := fromAPI(obj, prior)
	diags.Append(d...)
	diags.Append(state.Set(ctx, m)...)
}

// idKey is the log field of a kind's id, e.g. "target_pool_id".
func idKey(kind string) string { return strings.ReplaceAll(kind, " ", "_") + "_id" }

// putUpdate sends req, the update of the object (of kind, e.g. "target
// pool") of id, with put, an Update method of the client. Unconditional
// (no If-Match): the configuration is the desired state, whatever changed
// outside Terraform since the last refresh. Nil means diags holds why;
// resolve maps the API's field errors.
func putUpdate[R, T any](ctx context.Context, c *exampleapi.Client, kind, id string,
	put func(*exampleapi.Client, context.Context, string, R, int64) (*T, error), req R, resolve fieldResolver, diags *diag.Diagnostics) *T {
	obj, err := put(c, ctx, id, req, 0)
	if err != nil {
		addAPIError(diags, "Cannot update "+kind+" "+id, err, resolve)
		return nil
	}
	return obj
}

// deletion is how a resource deletes one of its objects.
type deletion struct {
	kind    string // e.g. "target pool"
	timeout time.Duration
	del     func(*exampleapi.Client, context.Context, string) error
	// gone, if set, waits until the object is gone, for a kind the cloud
	// deletes in the background.
	gone func(ctx context.Context, c *exampleapi.Client, id string) error
	// inUse, if set, is the way out when the cloud refuses to delete an
	// object in use (409), shown after the API's error.
	inUse string
}

// deleteByID is Delete for the object whose id the state holds. One
// already gone counts as deleted.
func deleteByID(ctx context.Context, data *providerData, req resource.DeleteRequest, resp *resource.DeleteResponse, d deletion) {
	var id string
	if !loadConfigured(ctx, data, &resp.Diagnostics, getAttribute(req.State, path.Root("id"), &id)) {
		return
	}
	ctx = tflog.SetField(ctx, idKey(d.kind), id)
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	err := d.del(data.client, ctx, id)
	switch {
	case exampleapi.IsNotFound(err):
		tflog.Info(ctx, d.kind+" already deleted")
		return
	case exampleapi.IsConflict(err) && d.inUse != "":
		resp.Diagnostics.AddError("Cannot delete "+d.kind+" "+id+": it is in use", fmt.Sprintf("%s\n\n%s", err, d.inUse))
		return
	case err != nil:
		addAPIError(&resp.Diagnostics, "Cannot delete "+d.kind+" "+id, err, nil)
		return
	}
	if d.gone != nil {
		if err := d.gone(ctx, data.client, id); err != nil {
			addAPIError(&resp.Diagnostics, capitalize(d.kind)+" "+id+" was not deleted", err, nil)
			return
		}
	}
	tflog.Info(ctx, "deleted "+d.kind)
}
