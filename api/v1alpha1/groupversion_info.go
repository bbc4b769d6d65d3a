// Package v1alpha1 contains the ontime.dev/v1alpha1 API: ScheduledJob, a
// drop-in replacement for batch/v1 CronJob.
//
// +kubebuilder:object:generate=true
// +groupName=ontime.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "ontime.dev", Version: "v1alpha1"}

	// SchemeBuilder registers this API's types with a runtime.Scheme:
	// apimachinery's, so that importing the API does not import
	// controller-runtime (whose scheme.Builder is deprecated for that).
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this API's types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme

	// knownTypes are the kinds the types files register from their init.
	knownTypes []runtime.Object
)

// register adds kinds to those AddToScheme registers.
func register(objects ...runtime.Object) { knownTypes = append(knownTypes, objects...) }

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, knownTypes...)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
