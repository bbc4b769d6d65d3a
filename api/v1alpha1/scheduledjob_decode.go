package v1alpha1

import (
	"cmp"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// UnmarshalJSON decodes a ScheduledJob as the API machinery does (case
// sensitive, integers kept), with one difference: an object whose spec or
// status this version cannot decode still decodes, with its type and
// metadata only and DecodeError saying what failed. Such an object was
// stored before the CRD bounded the field, or by a write that bypassed
// validation (a value such as successfulJobsHistoryLimit 2147483648, out of
// its Go type's range). Failing instead fails the whole list or watch that
// carries it: every informer listing ScheduledJobs stopped syncing, and no
// ScheduledJob ran. The controller reports such an object and leaves it,
// and its Jobs, alone; the webhook refuses to admit one.
func (sj *ScheduledJob) UnmarshalJSON(data []byte) error {
	// plain has ScheduledJob's fields without this method.
	type plain ScheduledJob
	var decoded plain
	err := kjson.UnmarshalCaseSensitivePreserveInts(data, &decoded)
	if err == nil {
		*sj = ScheduledJob(decoded)
		return nil
	}
	var identity struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
	}
	if metaErr := kjson.UnmarshalCaseSensitivePreserveInts(data, &identity); metaErr != nil || identity.Name == "" {
		// Not even its name: nothing to report it by.
		return err
	}
	*sj = ScheduledJob{TypeMeta: identity.TypeMeta, ObjectMeta: identity.ObjectMeta, DecodeError: decodeError(data, err)}
	return nil
}

// decodeError says what in data (a ScheduledJob) failed to decode, as the
// API server names a field it refuses: its path and value, then why. A
// time or duration's parse error names no field of its own, so the field
// is found by decoding each one alone. err as it is when none fails alone.
func decodeError(data []byte, err error) string {
	var parts map[string]json.RawMessage
	if json.Unmarshal(data, &parts) == nil {
		for _, part := range []struct {
			name string
			t    reflect.Type
		}{{"spec", reflect.TypeFor[ScheduledJobSpec]()}, {"status", reflect.TypeFor[ScheduledJobStatus]()}} {
			if raw, ok := parts[part.name]; ok {
				if found := failingField(raw, part.t, field.NewPath(part.name)); found != nil {
					return found.Error()
				}
			}
		}
	}
	return err.Error()
}

// failingField is the deepest field of raw, decoded as t at path, that
// fails to decode alone; nil when none does.
func failingField(raw json.RawMessage, t reflect.Type, path *field.Path) *field.Error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil {
			return nil
		}
		for _, name := range slices.Sorted(maps.Keys(fields)) {
			if ft, ok := jsonField(t, name); ok {
				if found := failingValue(fields[name], ft, path.Child(name)); found != nil {
					return found
				}
			}
		}
	case reflect.Slice:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for i, item := range items {
			if found := failingValue(item, t.Elem(), path.Index(i)); found != nil {
				return found
			}
		}
	case reflect.Map:
		var entries map[string]json.RawMessage
		if json.Unmarshal(raw, &entries) != nil {
			return nil
		}
		for _, key := range slices.Sorted(maps.Keys(entries)) {
			if found := failingValue(entries[key], t.Elem(), path.Key(key)); found != nil {
				return found
			}
		}
	}
	return nil
}

// failingValue is raw's failing field as failingField finds it, or raw
// itself when it fails to decode as t and no field of it does.
func failingValue(raw json.RawMessage, t reflect.Type, path *field.Path) *field.Error {
	err := kjson.UnmarshalCaseSensitivePreserveInts(raw, reflect.New(t).Interface())
	if err == nil {
		return nil
	}
	if found := failingField(raw, t, path); found != nil {
		return found
	}
	var value any
	_ = kjson.UnmarshalCaseSensitivePreserveInts(raw, &value)
	if parse := (*time.ParseError)(nil); errors.As(err, &parse) {
		return field.Invalid(path, value, "must be an RFC 3339 time such as 2026-01-01T00:00:00Z"+cmp.Or(parse.Message, ": "+parse.Error()))
	}
	return field.Invalid(path, value, err.Error())
}

// jsonField is the type of t's field named name in JSON, looking into
// inlined (embedded) structs.
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	for f := range t.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case tag == name:
			return f.Type, true
		case tag == "" && f.Anonymous:
			if ft, ok := jsonField(f.Type, name); ok {
				return ft, true
			}
		}
	}
	return nil, false
}
