package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestKeepsServedWebhooksCalledAtLocalhost: of a configuration with a
// Job's, a ClusterQueue's and a Deployment's webhooks, the first two are
// kept, called at localhost with the CA, under a name of Kueue's own; the
// Deployment's, which the local Kueue does not serve, is dropped.
func TestKeepsServedWebhooksCalledAtLocalhost(t *testing.T) {
	const manifests = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- name: mjob.kb.io
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {service: {name: webhook-service, namespace: system, path: /mutate-batch-v1-job}}
  rules: [{apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}]
- name: mclusterqueue.kb.io
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {service: {name: webhook-service, namespace: system, path: /mutate-kueue-x-k8s-io-v1beta2-clusterqueue}}
  rules: [{apiGroups: [kueue.x-k8s.io], apiVersions: [v1beta2], operations: [CREATE], resources: [clusterqueues]}]
- name: mdeployment.kb.io
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {service: {name: webhook-service, namespace: system, path: /mutate-apps-v1-deployment}}
  rules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
`
	dir := t.TempDir()
	in, ca := filepath.Join(dir, "manifests.yaml"), filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(in, []byte(manifests), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, []byte("the CA"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(in, "19443", ca, &out); err != nil {
		t.Fatal(err)
	}
	var got admissionv1.MutatingWebhookConfiguration
	if err := sigsyaml.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "kueue-mutating-webhook-configuration" {
		t.Errorf("name %q", got.Name)
	}
	var urls []string
	for _, w := range got.Webhooks {
		if w.ClientConfig.URL == nil || w.ClientConfig.Service != nil || string(w.ClientConfig.CABundle) != "the CA" {
			t.Errorf("%s: client config %+v, want a URL and the CA", w.Name, w.ClientConfig)
			continue
		}
		urls = append(urls, *w.ClientConfig.URL)
	}
	want := "https://localhost:19443/mutate-batch-v1-job https://localhost:19443/mutate-kueue-x-k8s-io-v1beta2-clusterqueue"
	if strings.Join(urls, " ") != want {
		t.Errorf("webhooks called at %q, want %q", urls, want)
	}
}
