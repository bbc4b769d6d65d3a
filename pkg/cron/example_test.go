package cron_test

import (
	"fmt"
	"time"

	"github.com/ontime-dev/ontime/pkg/cron"
)

func ExampleParse() {
	s, err := cron.Parse("30 2 * * 1-5")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Describe())
	fmt.Println(s.Next(time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)))
	// Output:
	// At 02:30, Monday through Friday (UTC)
	// 2026-11-23 02:30:00 +0000 UTC
}

func ExampleParser_Parse() {
	amsterdam, _ := time.LoadLocation("Europe/Amsterdam")
	p := cron.Parser{Dialect: cron.Extended, Location: amsterdam, HashKey: "reports/nightly"}
	s, err := p.Parse("H 3 L * *") // a hashed minute past 03:00 on the last day of each month
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Next(time.Date(2026, 2, 1, 0, 0, 0, 0, amsterdam)))
	// Output: 2026-02-28 03:25:00 +0100 CET
}

func ExampleSpec_Next_daylightSaving() {
	newYork, _ := time.LoadLocation("America/New_York")
	from := time.Date(2026, 3, 7, 12, 0, 0, 0, newYork) // 2026-03-08 02:00 EST jumps to 03:00 EDT
	for _, policy := range []cron.DSTPolicy{cron.DSTCron, cron.DSTKubernetes} {
		s, _ := cron.Parser{Location: newYork, DSTPolicy: policy}.Parse("30 2 * * *")
		first := s.Next(from)
		fmt.Println(policy, first, s.Next(first))
	}
	// Output:
	// cron 2026-03-08 03:00:00 -0400 EDT 2026-03-09 02:30:00 -0400 EDT
	// kubernetes 2026-03-09 02:30:00 -0400 EDT 2026-03-10 02:30:00 -0400 EDT
}

func ExampleSpec_Prev() {
	s, _ := cron.Parse("0 */6 * * *")
	fmt.Println(s.Prev(time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC)))
	// Output: 2026-05-01 12:00:00 +0000 UTC
}

func ExampleShift() {
	s, _ := cron.Parse("*/30 * * * 1-5")
	lines, _ := cron.Shift(s, 10*time.Minute, cron.Kubernetes)
	for _, line := range lines {
		fmt.Println(line)
	}
	// Output:
	// 20 * * * 1-5
	// 50 0-22 * * 1-5
	// 50 23 * * 0-4
}
