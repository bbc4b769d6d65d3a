package webhook

import (
	"context"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch

// expendableCutoff is cluster-autoscaler's default
// --expendable-pods-priority-cutoff: pods below it trigger no scale-up.
const expendableCutoff = -10

// priorityWarnings warns, for Placeholder warm-up, when the placeholders'
// PriorityClass is missing, lets them preempt, is below cluster-autoscaler's
// expendable cutoff, or is not below the priority of the run's pods (which
// then cannot preempt them at the hand-off).
func (v *Validator) priorityWarnings(ctx context.Context, sj *v1alpha1.ScheduledJob) admission.Warnings {
	if sj.Spec.WarmUp == nil {
		return nil
	}
	w := sj.Spec.WarmUp.SettingsWith(v.defaults)
	if w.Strategy != v1alpha1.WarmUpPlaceholder {
		return nil // no pod of that class runs
	}
	path := field.NewPath("spec", "warmUp", "placeholder", "priorityClassName")
	name := w.PriorityClassName
	class := &schedulingv1.PriorityClass{}
	if err := v.client.Get(ctx, client.ObjectKey{Name: name}, class); err != nil {
		return admission.Warnings{fmt.Sprintf("%s: PriorityClass %q cannot be read (%v); placeholders cannot be created without it (config/ installs ontime-placeholder)", path, name, err)}
	}
	var warnings admission.Warnings
	if class.PreemptionPolicy == nil || *class.PreemptionPolicy != "Never" {
		warnings = append(warnings, fmt.Sprintf("%s: PriorityClass %q lets placeholders preempt other pods; give it preemptionPolicy Never", path, name))
	}
	if class.Value < expendableCutoff {
		warnings = append(warnings, fmt.Sprintf("%s: PriorityClass %q has value %d, below cluster-autoscaler's expendable cutoff (%d): it adds no node for such placeholders", path, name, class.Value, expendableCutoff))
	}
	if run, ok := v.runPriority(ctx, sj); ok && run <= class.Value {
		warnings = append(warnings, fmt.Sprintf("%s: the run's pods have priority %d, not above the placeholders' %d: they cannot preempt the placeholders and take their capacity", path, run, class.Value))
	}
	return warnings
}

// runPriority is the priority the run's pods get: their PriorityClass's
// value, else the cluster's global default class, else 0.
func (v *Validator) runPriority(ctx context.Context, sj *v1alpha1.ScheduledJob) (int32, bool) {
	if name := sj.Spec.JobTemplate.Spec.Template.Spec.PriorityClassName; name != "" {
		class := &schedulingv1.PriorityClass{}
		if err := v.client.Get(ctx, client.ObjectKey{Name: name}, class); err != nil {
			return 0, false
		}
		return class.Value, true
	}
	var classes schedulingv1.PriorityClassList
	if err := v.client.List(ctx, &classes); err != nil {
		return 0, false
	}
	for _, class := range classes.Items {
		if class.GlobalDefault {
			return class.Value, true
		}
	}
	return 0, true
}
