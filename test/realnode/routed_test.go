//go:build realnode

package realnode

import "testing"

// TestNotRoutedYet: refused, or answered by a foreign server, is "not
// routed yet" and tried again; ontime's own certificate for the wrong name,
// or the webhook's answer, is not.
func TestNotRoutedYet(t *testing.T) {
	tests := map[string]bool{
		`dial tcp 10.96.0.20:443: connect: connection refused`: true,
		`tls: failed to verify certificate: x509: certificate is valid for archive.ubuntu.com, deb.debian.org, not ontime-webhook-service.ontime-system.svc`: true,
		`tls: failed to verify certificate: x509: certificate is valid for ontime-webhook-service.other.svc, not ontime-webhook-service.ontime-system.svc`:   false,
		`admission webhook "vscheduledjob.ontime.dev" denied the request: spec.schedule: Invalid value: "61 * * * *"`:                                        false,
	}
	for out, want := range tests {
		if got := notRoutedYet(out); got != want {
			t.Errorf("notRoutedYet(%q) = %v, want %v", out, got, want)
		}
	}
}
