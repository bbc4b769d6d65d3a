// Package clustercmd holds the commands that act on an installation of
// ontime: trigger (a ScheduledJob's run, now), backfill (its missed runs
// over a range), check (is the installation working, and if not, why),
// uninstall-preview (what uninstalling would delete) and pause (the command
// of a pause container, for the image's placeholders).
package clustercmd
