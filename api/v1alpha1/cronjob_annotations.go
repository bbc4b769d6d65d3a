package v1alpha1

import (
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A plain CronJob asks ontime for a concurrency group and warm-up by
// annotations. These are their rules, in one place: the CronJob webhook
// refuses what breaks them at admission, and the runtime (the Job webhook,
// CronJob warm-up) reads the annotations with the same functions and
// reports on the CronJob what was stored past admission (the webhook fails
// open).

// CronJobAnnotations are the annotations whose values these rules read:
// the CronJob webhook is called only for CronJobs that carry one of them.
var CronJobAnnotations = []string{GroupLabel, ClusterGroupLabel, GroupPriorityAnnotation, WarmUpLeadAnnotation, WarmUpStrategyAnnotation}

// annotationsPath is where the errors point.
var annotationsPath = field.NewPath("metadata", "annotations")

// CronJobGroup reads a CronJob's group annotations: the group it joins,
// if any, with its priority (ontime.dev/concurrency-priority, read only
// for a member). An error names the annotation and its value.
func CronJobGroup(cj *batchv1.CronJob) (ConcurrencyGroupRef, bool, *field.Error) {
	ref := ConcurrencyGroupRef{Kind: KindConcurrencyGroup, Name: cj.Annotations[GroupLabel]}
	key := GroupLabel
	if cluster, ok := cj.Annotations[ClusterGroupLabel]; ok {
		if _, both := cj.Annotations[GroupLabel]; both {
			return ref, false, field.Invalid(annotationsPath.Key(ClusterGroupLabel), cluster,
				"both "+GroupLabel+" and "+ClusterGroupLabel+" are set; a CronJob joins one group")
		}
		ref, key = ConcurrencyGroupRef{Kind: KindClusterConcurrencyGroup, Name: cluster}, ClusterGroupLabel
	}
	if _, ok := cj.Annotations[key]; !ok {
		return ref, false, nil
	}
	if msgs := validation.IsDNS1123Label(ref.Name); len(msgs) > 0 {
		return ref, false, field.Invalid(annotationsPath.Key(key), ref.Name, msgs[0])
	}
	if value, ok := cj.Annotations[GroupPriorityAnnotation]; ok {
		priority, err := strconv.Atoi(value)
		if err != nil || priority < -1000 || priority > 1000 {
			return ref, false, field.Invalid(annotationsPath.Key(GroupPriorityAnnotation), value, "must be a whole number from -1000 to 1000")
		}
		ref.Priority = int32(priority)
	}
	return ref, true, nil
}

// CronJobWarmUp reads a CronJob's warm-up annotations: nil without
// warmup.ontime.dev/lead (the strategy alone asks for nothing). defaults
// are the controller's: a CronJob has no field to set them. An error names
// the annotation and its value.
func CronJobWarmUp(cj *batchv1.CronJob, defaults ControllerDefaults) (*WarmUpSettings, *field.Error) {
	value, ok := cj.Annotations[WarmUpLeadAnnotation]
	if !ok {
		return nil, nil
	}
	leadPath := annotationsPath.Key(WarmUpLeadAnnotation)
	lead, err := time.ParseDuration(value)
	switch {
	case value == LeadAuto:
		return nil, field.Invalid(leadPath, value, "a CronJob's lead is a duration such as 10m; Auto needs a ScheduledJob, whose status it learns in")
	case err != nil:
		return nil, field.Invalid(leadPath, value, "not a duration such as 10m")
	case lead < MinWarmUpLead || lead > MaxWarmUpLead:
		return nil, field.Invalid(leadPath, value, "must be from "+MinWarmUpLead.String()+" to "+MaxWarmUpLead.String())
	}
	strategy := WarmUpStrategy(cj.Annotations[WarmUpStrategyAnnotation])
	if strategy != "" && strategy != WarmUpPlaceholder && strategy != WarmUpCapacityBuffer {
		return nil, field.Invalid(annotationsPath.Key(WarmUpStrategyAnnotation), strategy,
			"must be "+string(WarmUpPlaceholder)+" or "+string(WarmUpCapacityBuffer)+" ("+string(WarmUpEarlyStart)+" needs a ScheduledJob)")
	}
	settings := (&WarmUp{Lead: FixedLead(lead), Strategy: strategy}).SettingsWith(defaults)
	return &settings, nil
}

// CronJobAnnotationErrors are the errors of a CronJob's ontime
// annotations, each naming its key and value: what the CronJob webhook
// refuses.
func CronJobAnnotationErrors(cj *batchv1.CronJob) field.ErrorList {
	var errs field.ErrorList
	if _, _, err := CronJobGroup(cj); err != nil {
		errs = append(errs, err)
	}
	if _, err := CronJobWarmUp(cj, ControllerDefaults{}); err != nil {
		errs = append(errs, err)
	}
	return errs
}
