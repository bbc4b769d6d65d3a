// Package jobcontrol is how every actor that starts or stops runs (the
// leader, the standby, backfill, the concurrency groups) touches their
// Jobs, as upstream's jobControlInterface is for the CronJob controller:
// it creates a run's Job and says what an AlreadyExists means, deletes one
// only while it is the Job that was read (a UID precondition), lists an
// owner's Jobs from the cache and reads the recorded ones the cache lacks
// from the API server, and holds the indexes those lists use and the
// retry backoff the controllers share. Nothing here decides what to do.
package jobcontrol
