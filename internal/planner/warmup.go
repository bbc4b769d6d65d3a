package planner

import (
	"cmp"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/objective"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// timeline is what warm-up needs to know of the runs around now. It is
// empty while runs are not being scheduled (suspended, invalid, being
// deleted): warm-up then removes every placeholder.
type timeline struct {
	loc *time.Location
	// next is the next run, strictly after now; nextJob its Job when it
	// exists (created early), nextJobCreating when it is created now.
	next            time.Time
	nextJob         *batchv1.Job
	nextJobCreating bool
	// current is the latest run at or before now, currentJob its Job, and
	// currentStarts whether it started or is starting now.
	current       time.Time
	currentJob    *batchv1.Job
	currentStarts bool
	// currentCreating is the current run's Job when this plan creates it.
	currentCreating *batchv1.Job
}

// timeline describes the runs around now, given the runs this plan creates.
func (s scheduling) timeline(create, early *Run) timeline {
	t := timeline{loc: s.loc, next: s.sched.Next(s.now), nextJobCreating: early != nil}
	if !t.next.IsZero() {
		t.nextJob = jobNamed(s.jobs, s.sj.JobName(t.next))
	}
	if current := s.sched.Prev(s.now); !current.IsZero() {
		t.current = current
		t.currentJob = jobNamed(s.jobs, s.sj.JobName(current))
		t.currentStarts = t.currentJob != nil || (create != nil && create.Scheduled.Equal(current))
		if t.currentJob == nil && create != nil && create.Scheduled.Equal(current) {
			t.currentCreating = create.Job
		}
	}
	return t
}

func jobNamed(jobs []*batchv1.Job, name string) *batchv1.Job {
	for _, job := range jobs {
		if job.Name == name {
			return job
		}
	}
	return nil
}

// decideEarlyStart creates the next run's Job lead early under EarlyStart,
// its pods held until the run's time. Under concurrencyPolicy Forbid it
// waits while another run is active (the early Job is created when that
// one finishes, with less lead, or the run starts as without warm-up), so
// that two runs never overlap; under Replace the run replaces the active
// ones at its scheduled time, not earlier.
func (s scheduling) decideEarlyStart(create *Run, image string, peers []warmup.Peer) *Run {
	w := s.sj.Spec.WarmUp
	if w == nil || w.Strategy != v1alpha1.WarmUpEarlyStart || create != nil {
		return nil
	}
	next := s.sched.Next(s.now)
	if next.IsZero() || s.now.Before(next.Add(-chosenLead(s.sj, w.Settings(), peers, s.now).Lead.Duration)) {
		return nil
	}
	name := s.sj.JobName(next)
	if hasJobNamed(s.jobs, name) || s.atLimit(name) {
		return nil
	}
	run := s.newRun(name, next)
	warmup.HoldUntil(run.Job, ownerOf(s.sj), next, s.now, image)
	return run
}

// chosenLead is the lead of the next warm-up, and how it was chosen: the
// fixed lead, or under lead Auto one learned from the last warm-up, its
// own or a peer's (Input.LeadPeers) if that is newer.
func chosenLead(sj *v1alpha1.ScheduledJob, opts v1alpha1.WarmUpSettings, peers []warmup.Peer, now time.Time) v1alpha1.LeadStatus {
	return warmup.ChooseSharedLead(opts, sj.Status.WarmUp, sj.Status.LastRunStart, peers, now)
}

func ownerOf(sj *v1alpha1.ScheduledJob) warmup.Owner {
	return warmup.OwnerOf(sj, v1alpha1.GroupVersion.WithKind("ScheduledJob"), &sj.Spec.JobTemplate)
}

// warmDecision is warm-up's part of the plan: the changes to carry out,
// the state to record and the CapacityReady condition.
type warmDecision struct {
	warmup.Decision
	capacity capacity
	// strategy labels the run metrics: the warm-up strategy, or "none".
	strategy string
}

// noWarmUp labels the metrics of runs without warm-up.
const noWarmUp = "none"

// decideWarmUp decides about placeholders and follows the warm-up of the
// next run. Without spec.warmUp it removes every placeholder and buffer
// (warm-up was just turned off), and the state goes once no buffer is
// left: while one remains, it says to look for them again.
func decideWarmUp(sj *v1alpha1.ScheduledJob, in Input, runs timeline) warmDecision {
	if sj.Spec.WarmUp == nil {
		d := warmDecision{strategy: noWarmUp, capacity: capacity{absent: true}}
		d.Changes = warmup.RemoveAll(in.WarmUpPods, in.WarmUpBuffers, in.BufferAPI)
		if len(d.DeleteBuffers) > 0 {
			d.State = sj.Status.WarmUp
		}
		return d
	}
	opts := sj.Spec.WarmUp.SettingsWith(in.Defaults)
	lead := chosenLead(sj, opts, in.LeadPeers, in.Now)
	opts.Lead = lead.Lead.Duration
	admission := warmup.PredictAdmission(in.Group, cmp.Or(runs.currentJob, runs.currentCreating), sj.Namespace, sj.JobName(runs.next))
	decision := warmup.Decide(warmup.Input{Lead: &lead,
		Owner: ownerOf(sj), Options: opts, Now: in.Now,
		Next: runs.next, NextJob: runs.nextJob, NextJobCreating: runs.nextJobCreating, NextAdmission: admission.Next,
		Current: runs.current, CurrentStarts: runs.currentStarts, CurrentJob: runs.currentJob,
		CurrentWaits: admission.CurrentWaits, CurrentAdmission: admission.Current, GroupRefuses: admission.Refused,
		Pods: in.WarmUpPods, Previous: sj.Status.WarmUp, Buffers: in.WarmUpBuffers, BufferAPI: in.BufferAPI,
	})
	c := capacityOf(decision, runs, in.Now)
	if admission.Refused && decision.State == nil {
		c = refusedByGroup(sj.Spec.ConcurrencyGroup, sj.Namespace)
	}
	return warmDecision{Decision: decision, strategy: string(opts.Strategy), capacity: c}
}

// refusedByGroup is the condition of a member whose cluster concurrency
// group does not select its namespace: its runs are refused, so none is
// warmed.
func refusedByGroup(group *v1alpha1.ConcurrencyGroupRef, namespace string) capacity {
	return capacity{status: metav1.ConditionFalse, reason: v1alpha1.ReasonNotSelected, message: fmt.Sprintf(
		"no warm-up: %s %q's spec.namespaceSelector does not select namespace %q, so it refuses this ScheduledJob's runs", v1alpha1.KindClusterConcurrencyGroup, group.Name, namespace)}
}

// RunToMeasure returns the Job of the latest scheduled run whose start
// status.lastRunStart does not record yet, once that Job reports a pod
// ready or finished; nil when there is none. The reconciler reads that
// Job's pods for Input.RunPods, and the node warmup.NodeToRead names for
// Input.RunNode.
//
// With spec.startObjective, it also names the latest run not yet counted
// once it is overdue (objective.Overdue) though its Job reports no pod
// ready: a container may run without its pod being ready, and its pods
// say whether the run started (measured then) or not (counted late).
func RunToMeasure(sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job, now time.Time) *batchv1.Job {
	measured := lastMeasured(sj)
	if job := warmup.RunToMeasure(jobs, measured, now); job != nil {
		return job
	}
	if job, due := objective.Overdue(sj.Spec.StartObjective, sj.Status.StartObjective, measured, jobs, now); job != nil && !now.Before(due) {
		return job
	}
	return nil
}

// lastMeasured is the scheduled time of the last run whose start was
// measured (zero: none).
func lastMeasured(sj *v1alpha1.ScheduledJob) time.Time {
	if s := sj.Status.LastRunStart; s != nil {
		return s.ScheduledTime.Time
	}
	return time.Time{}
}
