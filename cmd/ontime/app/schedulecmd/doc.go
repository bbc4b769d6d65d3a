// Package schedulecmd holds the commands that read schedules, from the
// command line or a ScheduledJob in the cluster: next (the next runs),
// explain (what a schedule means; for a ScheduledJob, why it runs when it
// does and why its runs were late), prime (each run's warm-up start),
// spread (H fields for manifests; a spread group's rebalance), convert
// (CronJobs to ScheduledJobs and back) and report (each start objective's
// attainment).
package schedulecmd
