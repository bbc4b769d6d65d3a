//go:build realnode

package realnode

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

// slowPull is how long the slow registry holds each manifest request, and
// ownInit how long after its time the run's own init container exits.
const (
	slowPull = 8 * time.Second
	ownInit  = 8 * time.Second
)

// lateOnPurpose are two ScheduledJobs whose one run, at run, is late on
// the node for a known cause: ontime-slow-pull's image comes from a
// registry that answers its manifests slowPull late (imagePullPolicy
// Always: the kubelet resolves it for every run, as it would a tag on a
// busy or distant registry), and ontime-own-init has an init container of
// its own that waits until ownInit after the run's time.
func (e *env) lateOnPurpose(t *testing.T, run time.Time) []string {
	t.Helper()
	schedule := fmt.Sprintf("%d %d * * *", run.Minute(), run.Hour())
	ownImage := e.registry + "/ontime:" + version
	slow := strings.Replace(e.scheduledJob("ontime-slow-pull", schedule, "", "10m", "\n  timeZone: UTC"),
		"image: "+ownImage, "image: "+slowRegistry(t, e.registry, slowPull)+"/ontime:"+version+"\n            imagePullPolicy: Always", 1)
	initContainer := fmt.Sprintf(`
          initContainers:
          - name: prepare
            image: %s
            command: [/ontime-wait, --until, %s]%s
          containers:`, ownImage, run.Add(ownInit).UTC().Format(time.RFC3339), restrictedContainer)
	init := strings.Replace(e.scheduledJob("ontime-own-init", schedule, "", "10m", "\n  timeZone: UTC"), "\n          containers:", initContainer, 1)
	return []string{slow, init}
}

// checkLateOnPurpose: each run made late on purpose spent most of its
// lateness in the phase of its cause, the phases add up, and ontime
// explain gives the advice for that phase.
func (e *env) checkLateOnPurpose(t *testing.T, run time.Time) {
	t.Helper()
	for name, want := range map[string]struct {
		phase  v1alpha1.RunPhaseName
		least  time.Duration
		advice string
	}{
		"ontime-slow-pull": {v1alpha1.PhaseImagePull, slowPull - time.Second, "went to pulling images and creating containers"},
		"ontime-own-init":  {v1alpha1.PhaseInitContainers, ownInit / 2, "its init containers ran"},
	} {
		var s *v1alpha1.RunStart
		framework.Eventually(t, time.Minute, name+"'s run's start to be recorded", func() bool {
			sj := &v1alpha1.ScheduledJob{}
			if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: workloads, Name: name}, sj); err != nil {
				t.Fatal(err)
			}
			s = sj.Status.LastRunStart
			return s != nil && s.ScheduledTime.Time.Equal(run)
		})
		dominant, _ := s.Dominant()
		if sum := s.PhasesTotal(); sum != s.Lateness.Duration || dominant.Name != want.phase || s.Spent(want.phase) < want.least {
			t.Errorf("%s: %s late, phases %v (sum %s); want most of it, at least %s, in %s", name, s.Lateness.Duration, s.Phases, sum, want.least, want.phase)
		}
		out := framework.Command(t, nil, e.ontime, "explain", "sj/"+name, "-n", workloads, "--kubeconfig", e.cluster.Kubeconfig)
		if !strings.Contains(out, want.advice) {
			t.Errorf("ontime explain sj/%s does not say %q:\n%s", name, want.advice, out)
		}
		framework.Progress("%s at %s: %s late: %v", name, run.Format(time.TimeOnly), s.Lateness.Duration, s.Phases)
	}
}

// slowRegistry serves registry (HOST:PORT/PATH) through a proxy on
// loopback that holds every manifest request for delay, until the test
// ends, and returns the same repository path on it.
func slowRegistry(t *testing.T, registry string, delay time.Duration) string {
	t.Helper()
	host, path, _ := strings.Cut(registry, "/")
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: host})
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/") {
			time.Sleep(delay)
		}
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(func() { _ = server.Close() })
	return listener.Addr().String() + "/" + path
}
