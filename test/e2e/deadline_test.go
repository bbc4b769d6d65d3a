//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// late is a ScheduledJob every minute under Forbid whose runs take 70 s,
// with a deadline 60 s after each run's time: none can make it.
const late = "deadline"

func createLate(t *testing.T, c client.Client) {
	t.Helper()
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: late}, Spec: v1alpha1.ScheduledJobSpec{
		Schedule: "* * * * *", ConcurrencyPolicy: v1alpha1.ForbidConcurrent,
		Deadline:    &v1alpha1.Deadline{After: &metav1.Duration{Duration: time.Minute}},
		JobTemplate: pair{podSeconds: 70}.template()}}
	if err := c.Create(context.Background(), sj); err != nil {
		t.Fatal(err)
	}
}

// checkLate, across the leader's kill 40 s after the first run: the first
// run, with no run time learned yet, is reported DeadlineMissed within 60 s
// of its deadline; the second, held back by the first until it finished
// (its 70 s learned by then), is reported DeadlineAtRisk before its
// deadline, and DeadlineMissed within 60 s after it.
func checkLate(t *testing.T, c client.Client, firstRun time.Time) {
	var events corev1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace(namespace), client.MatchingFields{"involvedObject.name": late}); err != nil {
		t.Fatal(err)
	}
	second := firstRun.Add(time.Minute)
	for _, want := range []struct {
		reason        string
		run           time.Time
		after, before time.Time
	}{
		{v1alpha1.ReasonDeadlineMissed, firstRun, firstRun.Add(time.Minute), firstRun.Add(2 * time.Minute)},
		{v1alpha1.ReasonDeadlineAtRisk, second, second, second.Add(time.Minute)},
		{v1alpha1.ReasonDeadlineMissed, second, second.Add(time.Minute), second.Add(2 * time.Minute)},
	} {
		at, ok := eventAbout(events.Items, want.reason, want.run)
		switch {
		case !ok:
			t.Errorf("no %s event for the run of %s; events: %s", want.reason, want.run.Format(time.TimeOnly), eventSummary(events.Items))
		case at.Before(want.after.Add(-time.Second)) || at.After(want.before):
			t.Errorf("%s for the run of %s at %s, want from %s to %s", want.reason, want.run.Format(time.TimeOnly),
				at.Format(time.TimeOnly), want.after.Format(time.TimeOnly), want.before.Format(time.TimeOnly))
		default:
			t.Logf("%s for the run of %s at %s (its deadline %s)", want.reason, want.run.Format(time.TimeOnly), at.Format(time.TimeOnly), want.run.Add(time.Minute).Format(time.TimeOnly))
		}
	}
}

// eventAbout finds the event with reason whose message names the run of
// scheduled, and when it was first recorded (whole seconds).
func eventAbout(events []corev1.Event, reason string, scheduled time.Time) (time.Time, bool) {
	run := "the run of " + scheduled.UTC().Format(time.RFC3339)
	for _, e := range events {
		if e.Reason == reason && strings.Contains(e.Message, run) {
			return e.FirstTimestamp.Time, true
		}
	}
	return time.Time{}, false
}

func eventSummary(events []corev1.Event) string {
	var lines []string
	for _, e := range events {
		lines = append(lines, fmt.Sprintf("%s %s: %s", e.FirstTimestamp.Format(time.TimeOnly), e.Reason, e.Message))
	}
	return strings.Join(lines, "; ")
}
