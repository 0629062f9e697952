package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/cloud-provider-example/records"
)

// recordObjectPrefix names a record's ConfigMap: ccm-plans-<workspace>.
const recordObjectPrefix = "ccm-plans-"

// checkIncarnation refuses a record made for an earlier Service of the
// same name: its plans are not the current Service's.
func checkIncarnation(t *target) error {
	if t.service == nil || t.record.Object.UID == "" || t.record.Object.UID == string(t.service.UID) {
		return nil
	}
	return fmt.Errorf("the plan record of %s belongs to an earlier Service of that name (uid %s, the Service's is %s): wait for the controller to plan the current one",
		describe(t.ref), t.record.Object.UID, t.service.UID)
}

// annotationHolder names the object the controller reads approve-plan and
// force-unlock from: the Service, or for the route set (no object of its
// own) the record's ConfigMap.
func (c *cluster) annotationHolder(t *target) string {
	if t.ref.Kind == kindRouteSet {
		return fmt.Sprintf("ConfigMap %s/%s%s", c.namespace, recordObjectPrefix, t.record.Workspace)
	}
	return fmt.Sprintf("Service %s/%s", t.ref.Namespace, t.ref.Name)
}

// currentAnnotation is key's value on the holder now.
func (c *cluster) currentAnnotation(ctx context.Context, t *target, key string) (string, error) {
	if t.ref.Kind != kindRouteSet {
		return t.service.Annotations[key], nil
	}
	name := recordObjectPrefix + t.record.Workspace
	cm, err := c.client.CoreV1().ConfigMaps(c.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", c.explain(err, "get ConfigMap "+c.namespace+"/"+name)
	}
	return cm.Annotations[key], nil
}

// annotate sets key=value on the holder with a merge patch. The patch
// carries the uid the record was checked against, so it fails rather than
// annotate a Service deleted and created again in between.
func (c *cluster) annotate(ctx context.Context, t *target, key, value string) error {
	meta := map[string]any{"annotations": map[string]string{key: value}}
	if t.service != nil {
		meta["uid"] = t.service.UID
	}
	patch, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	what := "annotate " + c.annotationHolder(t)
	if t.ref.Kind == kindRouteSet {
		_, err = c.client.CoreV1().ConfigMaps(c.namespace).Patch(ctx, recordObjectPrefix+t.record.Workspace, types.MergePatchType, patch, metav1.PatchOptions{})
	} else {
		_, err = c.client.CoreV1().Services(t.ref.Namespace).Patch(ctx, t.ref.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if apierrors.IsNotFound(err) || uidChanged(err) {
		return fmt.Errorf("%s: it was deleted (or replaced) meanwhile: %w", what, err)
	}
	return c.explain(err, what)
}

// planLine is "plan-x (change, +1 ~0 -0, planned ... ago)".
func planLine(p *records.Plan) string {
	return fmt.Sprintf("%s (%s, %s, planned %s ago)", p.ID, p.Kind, p.Summary.String(), age(p.PlannedAt))
}

// uidChanged: the patch's uid is not the object's (metadata.uid is
// immutable), so it is another object of the same name.
func uidChanged(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) || se.Status().Details == nil {
		return false
	}
	return slices.ContainsFunc(se.Status().Details.Causes, func(c metav1.StatusCause) bool { return c.Field == "metadata.uid" })
}
