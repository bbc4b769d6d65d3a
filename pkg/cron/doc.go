// Package cron parses cron schedules and computes when they fire. It accepts
// exactly the language Kubernetes CronJob accepts, with the same fire times,
// and optionally an extended language; it handles time zones and
// daylight-saving changes with an explicit policy; it has no search horizon;
// and Next and Prev take tens of nanoseconds without allocating.
//
// # Schedules
//
// A schedule has five fields, minute (0-59), hour (0-23), day of month
// (1-31), month (1-12 or jan-dec) and day of week (0-6 or sun-sat, 0 is
// Sunday), each a comma-separated list of terms: *, ? (the same as *), a
// value, a range a-b, and a step /n after * or a range (a/n means a-max/n).
// A descriptor may replace the fields: @yearly (@annually), @monthly,
// @weekly, @daily (@midnight), @hourly and @every <Go duration>. A
// "TZ=<zone> " or "CRON_TZ=<zone> " prefix sets the time zone.
//
// When both day fields are restricted, a day matching either fires (POSIX).
// A field counts as unrestricted when one of its terms is * or ? with step 1,
// as in robfig/cron: "0 0 */2 * 1" fires on odd days and on Mondays.
//
// # Dialects
//
// The Kubernetes dialect (the default) is robfig/cron v3.0.1's
// ParseStandard, the parser kube-controller-manager uses, including its
// leniency ("*/60", "+5", "*-x", empty list terms). It rejects three things
// robfig accepts: a TZ= prefix with nothing after it (robfig panics), @every
// of zero or less, and schedules that never fire ("0 0 30 2 *").
//
// The Extended dialect adds Jenkins' hashed H, H/n, H(a-b) and H(a-b)/n
// (seeded by Parser.HashKey, with Jenkins' exact values), L, L-n, LW and nW
// in the day-of-month field, dL and d#n in the day-of-week field, and 7 for
// Sunday.
//
// # Time zones and daylight saving
//
// A schedule runs in Parser.Location (UTC by default; never time.Local) or
// the zone of its TZ= prefix. Wall-clock times that a daylight-saving change
// skips or repeats follow the schedule's DSTPolicy: DSTCron (the default)
// behaves like ISC cron, DSTKubernetes like robfig/cron. See Spec.Next.
//
// # Horizon
//
// Parse decides exactly whether a schedule can fire, from the 400-year
// Gregorian cycle, so Next never gives up on a schedule that fires: "0 0 29
// 2 *" after 2096 returns 2104-02-29, where robfig/cron returns the zero time
// after searching five years.
//
// # Warm-up schedules
//
// Shift computes the schedules that fire exactly a lead time before every
// activation of another, for warming capacity up ahead of a run.
package cron
