package validation

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// gapRuns and gapYears bound the search for the shortest interval between
// runs: enough for every weekly and yearly pattern of schedules that run
// up to a few hundred times a day.
const (
	gapRuns  = 2000
	gapYears = 10
)

// validateWarmUp checks spec.warmUp: the lead's bounds and, with
// EarlyStart, that warm-ups of consecutive runs cannot overlap (two runs'
// Jobs would exist at once, and concurrencyPolicy could not hold); with
// Placeholder an overlap is allowed and warned about. now starts the
// search for the shortest interval between runs.
func validateWarmUp(sj *v1alpha1.ScheduledJob, meaning v1alpha1.Meaning, now time.Time, path *field.Path) (field.ErrorList, []string) {
	w := sj.Spec.WarmUp
	if w == nil {
		return nil, nil
	}
	lead, leadPath, errs := validateLead(w, path)
	if len(errs) > 0 {
		return errs, nil
	}
	errs = validatePlaceholder(w.Placeholder, path.Child("placeholder"))
	var warnings []string
	if w.Strategy == v1alpha1.WarmUpEarlyStart {
		warnings = earlyStartWarnings(&sj.Spec.JobTemplate.Spec.Template.Spec, path.Child("strategy"))
	}
	gap := shortestGap(meaning, now)
	switch {
	case gap == 0 || lead < gap:
	case w.Strategy == v1alpha1.WarmUpEarlyStart:
		errs = append(errs, field.Invalid(leadPath, lead.String(), fmt.Sprintf(
			"with strategy EarlyStart, lead must be shorter than the shortest interval between runs (%s): a run's early Job would exist before the previous run starts", gap)))
	default:
		warnings = append(warnings, fmt.Sprintf("%s: %s is not shorter than the shortest interval between runs (%s): warm-up for a run begins only once the run before it has started, so it is shorter than the lead",
			leadPath, lead, gap))
	}
	return errs, warnings
}

// validateLead checks the lead, or for lead Auto its bounds, and returns
// the longest lead warm-up may use, with the field that sets it.
func validateLead(w *v1alpha1.WarmUp, path *field.Path) (time.Duration, *field.Path, field.ErrorList) {
	inRange := func(p *field.Path, d time.Duration) field.ErrorList {
		if d < v1alpha1.MinWarmUpLead || d > v1alpha1.MaxWarmUpLead {
			return field.ErrorList{field.Invalid(p, d.String(), fmt.Sprintf("must be from %s to %s", v1alpha1.MinWarmUpLead, v1alpha1.MaxWarmUpLead))}
		}
		return nil
	}
	if !w.Lead.Auto {
		return w.Lead.Duration.Duration, path.Child("lead"), inRange(path.Child("lead"), w.Lead.Duration.Duration)
	}
	settings := w.Settings()
	errs := append(inRange(path.Child("minLead"), settings.MinLead), inRange(path.Child("maxLead"), settings.MaxLead)...)
	if len(errs) == 0 && settings.MinLead > settings.MaxLead {
		errs = append(errs, field.Invalid(path.Child("maxLead"), settings.MaxLead.String(), fmt.Sprintf("must not be below minLead (%s)", settings.MinLead)))
	}
	if w.Strategy == v1alpha1.WarmUpCapacityBuffer {
		errs = append(errs, field.Invalid(path.Child("lead"), v1alpha1.LeadAuto,
			"lead Auto learns from when warm-up pods get their nodes; with strategy CapacityBuffer the autoscaler's report comes before the nodes are Ready (Karpenter counts launched NodeClaims), so set a duration"))
	}
	return settings.MaxLead, path.Child("maxLead"), errs
}

// earlyStartWarnings says when EarlyStart will hold the run's pods in an
// init container, whose containers then start seconds after the run's
// time, and what would let them wait in their own process instead.
func earlyStartWarnings(pod *corev1.PodSpec, path *field.Path) []string {
	reason := v1alpha1.EarlyStartHeldInInitContainer(pod)
	if reason == "" {
		return nil
	}
	return []string{fmt.Sprintf("%s: EarlyStart will hold the run's pods in an init container, because spec.jobTemplate.spec.template.spec.%s: "+
		"on a real kubelet their containers then start a few seconds after each run's time. Containers that name their command, with no liveness or startup probe, "+
		"no postStart hook and no init containers in the pod, wait in `ontime-wait` instead and start their command at the time (docs/warmup.md)", path, reason)}
}

func validatePlaceholder(p *v1alpha1.PlaceholderWarmUp, path *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	if hold := p.HoldAfterSchedule; hold != nil && (hold.Duration <= 0 || hold.Duration > v1alpha1.MaxHoldAfterSchedule) {
		errs = append(errs, field.Invalid(path.Child("holdAfterSchedule"), hold.Duration.String(), fmt.Sprintf("must be above 0 and at most %s", v1alpha1.MaxHoldAfterSchedule)))
	}
	if name := p.PriorityClassName; name != "" {
		for _, problem := range validation.IsDNS1123Subdomain(name) {
			errs = append(errs, field.Invalid(path.Child("priorityClassName"), name, problem))
		}
	}
	return errs
}

// shortestGap is the shortest interval between consecutive runs of the
// schedule (or, for spec.schedules, of their union) among the next
// gapRuns runs (within gapYears), in elapsed time (a daylight-saving
// change shortens a day), or 0 when the schedule cannot be read (reported
// elsewhere) or is a runAt.
func shortestGap(meaning v1alpha1.Meaning, now time.Time) time.Duration {
	if !meaning.Scheduled() {
		return 0
	}
	if s := meaning.Schedule; s != nil && s.Interval() > 0 {
		return s.Interval()
	}
	schedule := meaning.Runs(now)
	var gap time.Duration
	end := now.AddDate(gapYears, 0, 0)
	previous := schedule.Next(now)
	for range gapRuns {
		next := schedule.Next(previous)
		if next.IsZero() || next.After(end) {
			break
		}
		if d := next.Sub(previous); gap == 0 || d < gap {
			gap = d
		}
		previous = next
	}
	return gap
}
