package controllercmd

import "testing"

// TestControllerScope: good flags become the cache's scope.
func TestControllerScope(t *testing.T) {
	opts := controllerOptions{spreadNamespace: "ontime-system", namespaces: []string{"team-a", "team-b"},
		scheduledJobSelector: "shard=a", jobCache: jobCacheOwned}
	scope, err := opts.scope()
	if err != nil {
		t.Fatal(err)
	}
	if !scope.OwnedJobsOnly || len(scope.Namespaces) != 2 || scope.ScheduledJobSelector.String() != "shard=a" || scope.SpreadNamespace != "ontime-system" {
		t.Errorf("scope %+v", scope)
	}
	opts = controllerOptions{jobCache: jobCacheAll}
	if scope, err = opts.scope(); err != nil || scope.OwnedJobsOnly || scope.Namespaces != nil || scope.ScheduledJobSelector != nil {
		t.Errorf("default scope %+v, %v: want everything watched", scope, err)
	}
}
