// Package statuswrite is how every actor that writes status (the leader,
// the standby, backfill, the concurrency groups) writes it: one
// conditional writer, so that a status planned from an object someone has
// changed since is refused, never written over their change.
package statuswrite

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Write writes after's status over before's as a merge patch of the
// difference, conditional on before's resourceVersion: the API server
// answers a Conflict if the object changed since it was read, and the
// caller plans again from what it reads then. It writes nothing when the
// statuses do not differ, and reports whether it wrote; after then carries
// the object as written.
//
// always are status fields, by their JSON names, that the patch carries
// even when unchanged: a diff leaves out a value equal on both sides, so a
// count that is 0 on both would never be written at all (the ACTIVE
// column of a ScheduledJob that has not run would stay blank).
func Write(ctx context.Context, writer client.StatusClient, before, after client.Object, always map[string]any) (bool, error) {
	// One diff: the patch carries the resourceVersion (the condition) and
	// the status fields that differ, and no status at all when none does.
	data, err := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}).Data(after)
	if err != nil {
		return false, err
	}
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		return false, err
	}
	status, changed := body["status"].(map[string]any)
	if !changed {
		return false, nil
	}
	for field, value := range always {
		status[field] = value
	}
	if data, err = json.Marshal(body); err != nil {
		return false, err
	}
	return true, writer.Status().Patch(ctx, after, client.RawPatch(types.MergePatchType, data))
}
