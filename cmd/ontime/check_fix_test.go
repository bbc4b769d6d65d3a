package main

import (
	"errors"
	"strings"
	"testing"
)

// TestWebhookFix: what ontime check says to do about a dry-run create the
// API server refused, from the words it refused with (as kube-apiserver
// 1.34 words them).
func TestWebhookFix(t *testing.T) {
	for _, tc := range []struct {
		name, err, want string
	}{
		{"refused by RBAC", `scheduledjobs.ontime.dev is forbidden: User "dev" cannot create resource "scheduledjobs"`, "RBAC"},
		{"nothing listening", `Internal error occurred: failed calling webhook "vscheduledjob.ontime.dev": failed to call webhook: Post "https://ontime-webhook-service.ontime-system.svc:443/validate?timeout=10s": dial tcp 10.96.4.7:443: connect: connection refused`, "get pods,endpoints"},
		{"no endpoints", `Internal error occurred: failed calling webhook "vscheduledjob.ontime.dev": failed to call webhook: Post "https://ontime-webhook-service.ontime-system.svc:443/validate?timeout=10s": no endpoints available for service "ontime-webhook-service"`, "get pods,endpoints"},
		{"silent listener", `Internal error occurred: failed calling webhook "vscheduledjob.ontime.dev": failed to call webhook: Post "https://127.0.0.1:41231/validate?timeout=1s": context deadline exceeded`, "Private clusters"},
		{"packets dropped", `Internal error occurred: failed calling webhook "vscheduledjob.ontime.dev": failed to call webhook: Post "https://ontime-webhook-service.ontime-system.svc:443/validate?timeout=10s": dial tcp 10.8.0.12:9443: i/o timeout`, "Private clusters"},
		{"handshake never answered", `Internal error occurred: failed calling webhook "vscheduledjob.ontime.dev": failed to call webhook: Post "https://ontime-webhook-service.ontime-system.svc:443/validate?timeout=10s": net/http: TLS handshake timeout`, "Private clusters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if fix := webhookFix(errors.New(tc.err), "ontime-system"); !strings.Contains(fix, tc.want) {
				t.Errorf("webhookFix(%q) = %q, want it to say %q", tc.err, fix, tc.want)
			}
		})
	}
}
