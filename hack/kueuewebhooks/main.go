// Command kueuewebhooks rewrites Kueue's webhook configurations
// (config/components/webhook/manifests.yaml of its module) for a Kueue
// that runs on this host (hack/kueue.sh): the webhooks of the kinds it
// manages here only (its own API and batch Jobs), called at
// https://localhost:PORT with the CA that signed its certificate, under
// names of their own beside ontime's. A webhook of a kind the local Kueue
// does not serve would fail every request of that kind in the cluster.
//
//	go run ./hack/kueuewebhooks MANIFESTS PORT CA.crt > webhooks.yaml
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: kueuewebhooks MANIFESTS PORT CA.crt")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kueuewebhooks:", err)
		os.Exit(1)
	}
}

func run(manifests, port, caFile string, out io.Writer) error {
	data, err := os.ReadFile(manifests)
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	decoder := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs [][]byte
	for {
		var object map[string]any
		if err := decoder.Decode(&object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
		doc, err := rewrite(object, "https://localhost:"+port, ca)
		if err != nil {
			return err
		}
		docs = append(docs, doc)
	}
	_, err = out.Write(bytes.Join(docs, []byte("---\n")))
	return err
}

// rewrite is one webhook configuration with the webhooks kept (served)
// called at base.
func rewrite(object map[string]any, base string, ca []byte) ([]byte, error) {
	raw, err := sigsyaml.Marshal(object)
	if err != nil {
		return nil, err
	}
	switch object["kind"] {
	case "MutatingWebhookConfiguration":
		var c admissionv1.MutatingWebhookConfiguration
		if err := sigsyaml.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		c.Name = "kueue-" + c.Name
		c.Webhooks = keepServed(c.Webhooks, func(w *admissionv1.MutatingWebhook) ([]admissionv1.RuleWithOperations, *admissionv1.WebhookClientConfig) {
			return w.Rules, &w.ClientConfig
		}, base, ca)
		return sigsyaml.Marshal(c)
	case "ValidatingWebhookConfiguration":
		var c admissionv1.ValidatingWebhookConfiguration
		if err := sigsyaml.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		c.Name = "kueue-" + c.Name
		c.Webhooks = keepServed(c.Webhooks, func(w *admissionv1.ValidatingWebhook) ([]admissionv1.RuleWithOperations, *admissionv1.WebhookClientConfig) {
			return w.Rules, &w.ClientConfig
		}, base, ca)
		return sigsyaml.Marshal(c)
	}
	return nil, fmt.Errorf("unexpected kind %v", object["kind"])
}

// keepServed keeps the webhooks whose rules are served, each called at
// base with ca; parts gives a webhook's rules and its client config.
func keepServed[W any](webhooks []W, parts func(*W) ([]admissionv1.RuleWithOperations, *admissionv1.WebhookClientConfig), base string, ca []byte) []W {
	kept := webhooks[:0]
	for i := range webhooks {
		rules, config := parts(&webhooks[i])
		if served(rules) {
			*config = clientConfig(base, *config, ca)
			kept = append(kept, webhooks[i])
		}
	}
	return kept
}

// served reports whether a webhook's rules are for what the local Kueue
// manages: its own API, or batch Jobs.
func served(rules []admissionv1.RuleWithOperations) bool {
	for _, rule := range rules {
		for _, group := range rule.APIGroups {
			if strings.HasSuffix(group, "kueue.x-k8s.io") || (group == "batch" && slices.Contains(rule.Resources, "jobs")) {
				return true
			}
		}
	}
	return false
}

// clientConfig calls the service's path at base instead.
func clientConfig(base string, in admissionv1.WebhookClientConfig, ca []byte) admissionv1.WebhookClientConfig {
	path := ""
	if in.Service != nil && in.Service.Path != nil {
		path = *in.Service.Path
	}
	url := base + path
	return admissionv1.WebhookClientConfig{URL: &url, CABundle: ca}
}
