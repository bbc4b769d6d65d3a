// Package interleaving holds the test that explores, seed by seed, the
// interleavings of everything that acts on ScheduledJobs at once: the
// leader, the standby of every replica, a new leader after a kill at any
// request, history cleanup, the Job controller finishing Jobs, a user
// triggering runs, caches whose watches lag, and API outages. The real
// reconcilers run against a fake API server (api_test.go) whose every
// request, and every cache update, is one step that a seeded scheduler
// (world_test.go) orders; a checker (check_test.go) reads the API server's
// history and reports every broken invariant of docs/reliability.md.
//
// The package has no code outside its tests.
package interleaving
