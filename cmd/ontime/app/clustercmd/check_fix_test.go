package clustercmd

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestWebhookFix: what ontime check says to do about a dry-run create the
// API server refused: by the error's type, then, inside an InternalError
// for a webhook call, by the words the API server gives (as
// kube-apiserver 1.34 and 1.37 word them).
func TestWebhookFix(t *testing.T) {
	for _, tc := range []struct {
		name, err, want string
	}{
		{"refused by RBAC", `scheduledjobs.ontime.dev is forbidden: User "dev" cannot create resource "scheduledjobs"`, "RBAC"},
		{"refused by a webhook's rule", `admission webhook "vscheduledjob.ontime.dev" denied the request: spec.schedule: Invalid value: "x": connect: connection refused`, "RBAC"},
		{"nothing listening", `Internal error occurred: failed calling webhook "vscheduledjob.ontime.dev": failed to call webhook: Post "https://ontime-webhook-service.ontime-system.svc:443/validate?timeout=10s": dial tcp 10.96.4.7:443: connect: connection refused`, "get pods,endpoints"},
		{"no endpoints", `Internal error occurred: failed calling webhook "vscheduledjob.ontime.dev": failed to call webhook: Post "https://ontime-webhook-service.ontime-system.svc:443/validate?timeout=10s": no endpoints available for service "ontime-webhook-service"`, "get pods,endpoints"},
		{"silent listener", `Internal error occurred: failed calling webhook "vscheduledjob.ontime.dev": failed to call webhook: Post "https://127.0.0.1:41231/validate?timeout=1s": context deadline exceeded`, "Private clusters"},
		{"packets dropped", `Internal error occurred: failed calling webhook "vscheduledjob.ontime.dev": failed to call webhook: Post "https://ontime-webhook-service.ontime-system.svc:443/validate?timeout=10s": dial tcp 10.8.0.12:9443: i/o timeout`, "Private clusters"},
		{"handshake never answered", `Internal error occurred: failed calling webhook "vscheduledjob.ontime.dev": failed to call webhook: Post "https://ontime-webhook-service.ontime-system.svc:443/validate?timeout=10s": net/http: TLS handshake timeout`, "Private clusters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := error(apierrors.NewInternalError(errors.New(strings.TrimPrefix(tc.err, "Internal error occurred: "))))
			if !strings.HasPrefix(tc.err, "Internal error occurred: ") {
				err = apierrors.NewForbidden(schema.GroupResource{Group: "ontime.dev", Resource: "scheduledjobs"}, "", errors.New(tc.err))
			}
			if fix := webhookFix(err, "ontime-system"); !strings.Contains(fix, tc.want) {
				t.Errorf("webhookFix(%q) = %q, want it to say %q", tc.err, fix, tc.want)
			}
		})
	}
}

// TestWebhookCallFailure: only an InternalError of a webhook call is one;
// the same words in another error (this client's own connection, a
// webhook's denial quoting them) are not.
func TestWebhookCallFailure(t *testing.T) {
	call := func(reason string) error {
		return apierrors.NewInternalError(fmt.Errorf(`failed calling webhook "vscheduledjob.ontime.dev": failed to call webhook: Post "https://ontime-webhook-service.ontime-system.svc:443/validate?timeout=10s": %s`, reason))
	}
	ownConnection := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name string
		err  error
		want webhookFailure
	}{
		{"refused", call("dial tcp 10.96.4.7:443: connect: connection refused"), callRefused},
		{"timed out", call("context deadline exceeded"), callTimedOut},
		{"no endpoints", call(`no endpoints available for service "ontime-webhook-service"`), callFailed},
		{"this client's connection refused", fmt.Errorf("Post \"https://127.0.0.1:6443/apis\": %w", ownConnection), notAWebhookCall},
		{"an internal error of the API server", apierrors.NewInternalError(errors.New("etcdserver: connect: connection refused")), notAWebhookCall},
		{"a denial quoting the words", apierrors.NewBadRequest(`failed calling webhook: connect: connection refused`), notAWebhookCall},
		{"no error", nil, notAWebhookCall},
	} {
		if got := webhookCallFailure(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
