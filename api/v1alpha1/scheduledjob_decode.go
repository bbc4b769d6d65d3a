package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
)

// UnmarshalJSON decodes a ScheduledJob as the API machinery does (case
// sensitive, integers kept), with one difference: an object whose spec or
// status this version cannot decode still decodes, with its type and
// metadata only and DecodeError saying what failed. Such an object was
// stored before the CRD bounded the field, or by a write that bypassed
// validation (a value such as successfulJobsHistoryLimit 2147483648, out of
// its Go type's range). Failing instead fails the whole list or watch that
// carries it: every informer listing ScheduledJobs stopped syncing, and no
// ScheduledJob ran. The controller reports such an object and leaves it,
// and its Jobs, alone; the webhook refuses to admit one.
func (sj *ScheduledJob) UnmarshalJSON(data []byte) error {
	// plain has ScheduledJob's fields without this method.
	type plain ScheduledJob
	var decoded plain
	err := kjson.UnmarshalCaseSensitivePreserveInts(data, &decoded)
	if err == nil {
		*sj = ScheduledJob(decoded)
		return nil
	}
	var identity struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
	}
	if metaErr := kjson.UnmarshalCaseSensitivePreserveInts(data, &identity); metaErr != nil || identity.Name == "" {
		// Not even its name: nothing to report it by.
		return err
	}
	*sj = ScheduledJob{TypeMeta: identity.TypeMeta, ObjectMeta: identity.ObjectMeta, DecodeError: err.Error()}
	return nil
}
