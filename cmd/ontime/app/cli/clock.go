package cli

import "time"

// Now is the commands' clock: every "now" a command reads (the next runs,
// a trigger's or a backfill's time, a check's age) is Now(). Tests replace
// it to fix the time.
var Now = time.Now
