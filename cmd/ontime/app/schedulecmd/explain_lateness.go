package schedulecmd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/validation"
)

// lateForAdvice is how long a run's dominant phase must have taken for
// explain to name the change that would have prevented it: a start within
// a few seconds is what creating a Job and a pod costs anyway.
const lateForAdvice = 5 * time.Second

// explainedStart is one measured run's start, where its lateness went,
// and for a late run the change that would have prevented it.
type explainedStart struct {
	Run      string                `json:"run"`
	Lateness string                `json:"lateness"`
	Phases   []phaseShare          `json:"phases,omitempty"`
	Dominant v1alpha1.RunPhaseName `json:"dominant,omitempty"`
	Advice   string                `json:"advice,omitempty"`
}

// phaseShare is the time a run's start spent in one phase.
type phaseShare struct {
	Phase    v1alpha1.RunPhaseName `json:"phase"`
	Duration string                `json:"duration"`
}

// lateRunOwner is what the advice for a late run reads of its owner, a
// ScheduledJob or an annotated CronJob.
type lateRunOwner struct {
	// schedule is the owner's schedule as written; hashable whether it may
	// use H (a ScheduledJob's; a CronJob's is read by the CronJob
	// controller, which has no H).
	schedule string
	hashable bool
	group    *v1alpha1.ConcurrencyGroupRef
	// lastWarmUp is the owner's last warm-up (status.warmUp, or a
	// CronJob's state).
	lastWarmUp *v1alpha1.WarmUpStatus
}

// explainStarts explains an owner's recent runs' starts, newest first.
func explainStarts(starts []v1alpha1.RunStart, owner lateRunOwner, m v1alpha1.Meaning) []explainedStart {
	var out []explainedStart
	for _, start := range starts {
		e := explainedStart{Run: start.ScheduledTime.In(m.Location).Format(time.RFC3339), Lateness: start.Lateness.Duration.String()}
		for _, p := range start.Phases {
			e.Phases = append(e.Phases, phaseShare{Phase: p.Name, Duration: p.Duration.Duration.String()})
		}
		if dominant, ok := start.Dominant(); ok {
			e.Dominant = dominant.Name
			if dominant.Duration.Duration >= lateForAdvice {
				e.Advice = advice(owner, m, start, dominant)
			}
		}
		out = append(out, e)
	}
	return out
}

// recentStarts are the starts a status or state recorded: recentRunStarts,
// or lastRunStart alone as ontime 0.1.0's controller writes it.
func recentStarts(recent []v1alpha1.RunStart, last *v1alpha1.RunStart) []v1alpha1.RunStart {
	if len(recent) == 0 && last != nil {
		return []v1alpha1.RunStart{*last}
	}
	return recent
}

// advice names the one change that would have prevented a run's start
// from being late by its dominant phase.
func advice(owner lateRunOwner, m v1alpha1.Meaning, start v1alpha1.RunStart, dominant v1alpha1.RunPhase) string {
	took := dominant.Duration.Duration
	switch dominant.Name {
	case v1alpha1.PhaseController:
		return controllerAdvice(owner, m, took)
	case v1alpha1.PhaseConcurrencyGroup:
		group := "its concurrency group"
		if g := owner.group; g != nil {
			group = fmt.Sprintf("%s %q", g.Kind, g.Name)
		}
		return fmt.Sprintf("it waited %s in %s, at its limit: raise the group's maxActive, give this job a higher priority, or move its schedule away from the group's busy minutes", took, group)
	case v1alpha1.PhaseJobController:
		return fmt.Sprintf("the Job controller took %s to create its pod: kube-controller-manager or the API server was slow or down", took)
	case v1alpha1.PhaseNode:
		return nodeAdvice(owner, m, start, took)
	case v1alpha1.PhaseScheduling:
		return fmt.Sprintf("it waited %s to be scheduled with no new node for it: the cluster had no room and no autoscaler added a node, or its constraints did not fit (with warm-up, a placeholder holds the room; where ontime may not read nodes, a wait for a new node is counted here)", took)
	case v1alpha1.PhasePodSandbox:
		return fmt.Sprintf("the kubelet took %s to set up the pod's sandbox and network (the container runtime or the CNI plugin was slow)", took)
	case v1alpha1.PhaseImagePull:
		return fmt.Sprintf("%s went to pulling images and creating containers, most likely an image not cached on the node: a smaller or pre-pulled image, or warm-up strategy EarlyStart, which pulls it during the lead", took)
	case v1alpha1.PhaseInitContainers:
		return fmt.Sprintf("its init containers ran %s after its time: that work is part of every start; move it into the container, or give the containers a command so that EarlyStart can start them early (docs/warmup.md)", took)
	}
	return ""
}

// controllerAdvice is the advice for a run whose Job was created late: a
// crowded minute's H form, where the schedule has none.
func controllerAdvice(owner lateRunOwner, m v1alpha1.Meaning, took time.Duration) string {
	late := fmt.Sprintf("its Job was created %s late: the controller that creates it was down, failing over or busy", took)
	if m.Schedule == nil || len(m.Schedule.HashTerms()) > 0 || owner.schedule == "" {
		return late + " (its logs and metrics say which)"
	}
	if !owner.hashable {
		return late + fmt.Sprintf(". If many jobs start in the same minute, a ScheduledJob with %q gives it a minute of its own (docs/spreading.md)", validation.ProposeH(owner.schedule))
	}
	return late + fmt.Sprintf(". If many jobs start in the same minute, %q gives it a minute of its own (docs/spreading.md)", validation.ProposeH(owner.schedule))
}

// nodeAdvice is the advice for a run that waited for a new node: warm-up,
// or a longer lead.
func nodeAdvice(owner lateRunOwner, m v1alpha1.Meaning, start v1alpha1.RunStart, took time.Duration) string {
	w := m.WarmUp
	if w == nil {
		return fmt.Sprintf("it waited %s for a new node: warm-up is off; spec.warmUp with lead Auto brings the node up before the run's time (docs/warmup.md)", took)
	}
	lead := w.Lead
	if last := owner.lastWarmUp; last != nil && last.ScheduledTime.Equal(&start.ScheduledTime) && last.Lead != nil {
		lead = last.Lead.Lead.Duration
	}
	needed := lead + took
	if w.AutoLead {
		if needed > w.MaxLead {
			return fmt.Sprintf("it waited %s for a new node after a warm-up begun %s ahead: its node took about %s to come up, more than maxLead (%s); raise the warm-up's maxLead", took, lead, needed, w.MaxLead)
		}
		return fmt.Sprintf("it waited %s for a new node after a warm-up begun %s ahead: its node took about %s to come up; lead Auto learns that from this run", took, lead, needed)
	}
	return fmt.Sprintf("it waited %s for a new node after a warm-up begun %s ahead: its node took about %s to come up; set the warm-up's lead to at least %s, or to Auto", took, lead, needed, needed)
}

// printStarts prints the recent runs' starts under explain's other lines.
func printStarts(out io.Writer, starts []explainedStart) {
	if len(starts) == 0 {
		return
	}
	fmt.Fprintln(out, "Recent runs, when they started:")
	for _, s := range starts {
		var phases []string
		for _, p := range s.Phases {
			phases = append(phases, fmt.Sprintf("%s %s", p.Phase, p.Duration))
		}
		fmt.Fprintf(out, "  %s  %s late", s.Run, s.Lateness)
		if len(phases) > 0 {
			fmt.Fprintf(out, ": %s", strings.Join(phases, ", "))
		}
		fmt.Fprintln(out)
		if s.Advice != "" {
			fmt.Fprintf(out, "    %s.\n", s.Advice)
		}
	}
}
