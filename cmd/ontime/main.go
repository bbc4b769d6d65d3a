// Command ontime is the ontime operator and its command-line tool: one
// binary whose subcommands run the controller (ontime controller) and answer
// schedule questions offline (ontime next, explain, prime, spread). The
// commands are in package app.
package main

import (
	"os"

	// Embed the IANA time zone database, so that schedules with a time zone
	// work in minimal container images that have no /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/ontime-dev/ontime/cmd/ontime/app"
)

func main() {
	os.Exit(app.Run(os.Args[1:], os.Stdout, os.Stderr))
}
