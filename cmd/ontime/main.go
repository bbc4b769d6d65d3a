// Command ontime is the ontime operator and its command-line tool: one
// binary whose subcommands run the controller (ontime controller) and answer
// schedule questions offline (ontime next, explain, prime, spread).
package main

import (
	"os"

	// Embed the IANA time zone database, so that schedules with a time zone
	// work in minimal container images that have no /usr/share/zoneinfo.
	_ "time/tzdata"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
