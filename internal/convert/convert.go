// Package convert rewrites CronJob manifests into ScheduledJobs and back,
// in place in their YAML (kyaml), so comments, key order and other
// documents stay as they were. A ScheduledJob's spec is a superset of a
// CronJob's: every CronJob converts; a ScheduledJob converts back only if
// it uses nothing a CronJob lacks, and otherwise the error names the field.
package convert

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// Direction says what becomes what.
type Direction string

const (
	// ToScheduledJob turns batch/v1 CronJobs into ScheduledJobs.
	ToScheduledJob Direction = "scheduledjob"
	// ToCronJob turns ScheduledJobs into batch/v1 CronJobs.
	ToCronJob Direction = "cronjob"
)

const (
	cronJobAPIVersion      = "batch/v1"
	cronJobKind            = "CronJob"
	scheduledJobAPIVersion = "ontime.dev/v1alpha1"
	scheduledJobKind       = "ScheduledJob"
)

// Converted is one object the conversion rewrote.
type Converted struct {
	Name string `json:"name"`
	From string `json:"from"`
	To   string `json:"to"`
	// Note says what the object's behavior gains or loses, if anything.
	Note string `json:"note,omitempty"`
}

// File rewrites the objects of one YAML file (one or more documents, each
// an object or a List of them, as kubectl get -o yaml prints several) and
// returns the new content and what it converted; objects of other kinds
// are left untouched. path names the file in errors.
func File(path string, content []byte, to Direction) ([]byte, []Converted, error) {
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(content), PreserveSeqIndent: true}
	nodes, err := rw.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var converted []Converted
	var errs []error
	for _, node := range objects(nodes) {
		c, ok, err := object(node, to)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s %s: %w", path, node.GetKind(), node.GetName(), err))
			continue
		}
		if ok {
			converted = append(converted, c)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	if len(converted) == 0 {
		return content, nil, nil
	}
	// The same reader-writer writes, keeping the file's indentation and
	// dropping the annotations its reading added.
	var out bytes.Buffer
	rw.Writer = &out
	if err := rw.Write(nodes); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return out.Bytes(), converted, nil
}

// objects are the documents' objects: a List's items in its place.
func objects(documents []*yaml.RNode) []*yaml.RNode {
	var out []*yaml.RNode
	for _, document := range documents {
		if document.GetKind() != "List" {
			out = append(out, document)
			continue
		}
		if items, err := document.Pipe(yaml.Lookup("items")); err == nil && items != nil {
			elements, _ := items.Elements()
			out = append(out, elements...)
		}
	}
	return out
}

// serverSet are the metadata fields the API server sets, which a create
// of the converted object must not carry (a resourceVersion is refused),
// and the last applied configuration, which describes the old kind.
var serverSet = []string{"resourceVersion", "uid", "managedFields", "creationTimestamp", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// asNewObject drops what the API server set on the object read from it:
// the converted object is a new one, of another kind.
func asNewObject(node *yaml.RNode) error {
	if metadata, err := node.Pipe(yaml.Lookup("metadata")); err == nil && metadata != nil {
		for _, field := range serverSet {
			if _, err := metadata.Pipe(yaml.Clear(field)); err != nil {
				return err
			}
		}
	}
	// ontime's own state of a CronJob's warm-up, and kubectl's record of
	// the old kind, belong to the object that goes.
	for _, annotation := range []string{v1alpha1.WarmUpStateAnnotation, "kubectl.kubernetes.io/last-applied-configuration"} {
		if err := node.PipeE(yaml.ClearAnnotation(annotation)); err != nil {
			return err
		}
	}
	return node.PipeE(yaml.Clear("status"))
}

// object converts one document if it is of the kind converted from.
func object(node *yaml.RNode, to Direction) (Converted, bool, error) {
	apiVersion, kind := node.GetApiVersion(), node.GetKind()
	c := Converted{Name: node.GetName(), From: kind}
	switch {
	case to == ToScheduledJob && apiVersion == cronJobAPIVersion && kind == cronJobKind:
		c.To = scheduledJobKind
		err := toScheduledJob(node, &c)
		return c, err == nil, err
	case to == ToCronJob && apiVersion == scheduledJobAPIVersion && kind == scheduledJobKind:
		c.To = cronJobKind
		err := toCronJob(node, &c)
		return c, err == nil, err
	}
	return c, false, nil
}

// toScheduledJob: the spec carries over as is; the warm-up annotations of
// a CronJob become spec.warmUp (the strategy they ask for, by default
// Placeholder).
func toScheduledJob(node *yaml.RNode, c *Converted) error {
	if err := setType(node, scheduledJobAPIVersion, scheduledJobKind); err != nil {
		return err
	}
	annotations := node.GetAnnotations()
	if lead, ok := annotations[v1alpha1.WarmUpLeadAnnotation]; ok {
		strategy := cmp.Or(annotations[v1alpha1.WarmUpStrategyAnnotation], string(v1alpha1.WarmUpPlaceholder))
		warmUp := yaml.NewMapRNode(nil) // fields in this order: not from a map
		if err := warmUp.PipeE(yaml.SetField("strategy", yaml.NewScalarRNode(strategy))); err != nil {
			return err
		}
		if err := warmUp.PipeE(yaml.SetField("lead", yaml.NewScalarRNode(lead))); err != nil {
			return err
		}
		if err := node.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("warmUp", warmUp)); err != nil {
			return err
		}
		for _, annotation := range []string{v1alpha1.WarmUpLeadAnnotation, v1alpha1.WarmUpStrategyAnnotation} {
			if err := node.PipeE(yaml.ClearAnnotation(annotation)); err != nil {
				return err
			}
		}
		c.note("annotation " + v1alpha1.WarmUpLeadAnnotation + " is now spec.warmUp")
	}
	return asNewObject(node)
}

// toCronJob refuses what a CronJob cannot say, naming the field.
func toCronJob(node *yaml.RNode, c *Converted) error {
	spec, err := node.Pipe(yaml.Lookup("spec"))
	if err != nil || spec == nil {
		return errors.New("no spec")
	}
	for _, field := range []string{"runAt", "spread", "suspendAfterFailures", "maxActive", "catchUp", "schedules"} {
		if value := spec.Field(field); value != nil {
			return fmt.Errorf("spec.%s: a CronJob has no such field", field)
		}
	}
	schedule := fieldValue(spec, "schedule")
	if _, err := cron.Parse(schedule); err != nil { // the Kubernetes dialect
		return fmt.Errorf("spec.schedule %q is not a CronJob schedule; for H, pin it first with ontime spread -f: %w", schedule, err)
	}
	if err := dstPolicy(spec, c); err != nil {
		return err
	}
	if err := warmUpAnnotation(node, spec, c); err != nil {
		return err
	}
	if err := setType(node, cronJobAPIVersion, cronJobKind); err != nil {
		return err
	}
	return asNewObject(node)
}

// dstPolicy: a CronJob behaves as dstPolicy Kubernetes. The field goes;
// with a time zone and the Cron policy, the note says what changes.
func dstPolicy(spec *yaml.RNode, c *Converted) error {
	policy := v1alpha1.DSTCron
	if value := fieldValue(spec, "dstPolicy"); value != "" {
		policy = v1alpha1.DSTPolicy(value)
		if _, err := spec.Pipe(yaml.Clear("dstPolicy")); err != nil {
			return err
		}
	}
	if policy != v1alpha1.DSTKubernetes && spec.Field("timeZone") != nil {
		c.note("daylight-saving changes now skip or repeat runs (a CronJob's dstPolicy is Kubernetes)")
	}
	return nil
}

// warmUpAnnotation: Placeholder or CapacityBuffer warm-up with only a lead
// is what a CronJob's annotations ask for; anything more has no CronJob
// form.
func warmUpAnnotation(node, spec *yaml.RNode, c *Converted) error {
	warmUp := spec.Field("warmUp")
	if warmUp == nil {
		return nil
	}
	fields, err := warmUp.Value.Fields()
	if err != nil {
		return err
	}
	strategy := fieldValue(warmUp.Value, "strategy")
	for _, field := range fields {
		if field != "strategy" && field != "lead" {
			return fmt.Errorf("spec.warmUp.%s: a CronJob's warm-up annotation has only a lead", field)
		}
	}
	if strategy != "" && strategy != string(v1alpha1.WarmUpPlaceholder) && strategy != string(v1alpha1.WarmUpCapacityBuffer) {
		return fmt.Errorf("spec.warmUp.strategy %q: a CronJob gets Placeholder or CapacityBuffer warm-up only", strategy)
	}
	lead := fieldValue(warmUp.Value, "lead")
	if lead == "" {
		return errors.New("spec.warmUp.lead: required for a CronJob's warm-up annotation")
	}
	if lead == v1alpha1.LeadAuto {
		return errors.New("spec.warmUp.lead \"Auto\": a CronJob's lead is a duration (it has no status to learn one in)")
	}
	// A plain scalar, as people write it (SetAnnotation would quote it).
	annotation := yaml.SetField(v1alpha1.WarmUpLeadAnnotation, yaml.NewScalarRNode(lead))
	if err := node.PipeE(yaml.LookupCreate(yaml.MappingNode, "metadata", "annotations"), annotation); err != nil {
		return err
	}
	if strategy == string(v1alpha1.WarmUpCapacityBuffer) {
		annotation := yaml.SetField(v1alpha1.WarmUpStrategyAnnotation, yaml.NewScalarRNode(strategy))
		if err := node.PipeE(yaml.LookupCreate(yaml.MappingNode, "metadata", "annotations"), annotation); err != nil {
			return err
		}
	}
	if _, err := spec.Pipe(yaml.Clear("warmUp")); err != nil {
		return err
	}
	c.note("spec.warmUp is now annotation " + v1alpha1.WarmUpLeadAnnotation)
	return nil
}

func (c *Converted) note(note string) {
	if c.Note != "" {
		c.Note += "; "
	}
	c.Note += note
}

// fieldValue is a scalar field's value, "" when it is absent.
func fieldValue(node *yaml.RNode, name string) string {
	if field := node.Field(name); field != nil {
		return yaml.GetValue(field.Value)
	}
	return ""
}

func setType(node *yaml.RNode, apiVersion, kind string) error {
	if err := node.PipeE(yaml.SetField("apiVersion", yaml.NewStringRNode(apiVersion))); err != nil {
		return err
	}
	return node.PipeE(yaml.SetField("kind", yaml.NewStringRNode(kind)))
}
