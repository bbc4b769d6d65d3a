package testenv

import (
	"net"
	"testing"
)

// FreeAddress is a loopback address whose port was free a moment ago,
// for a server a test starts.
func FreeAddress(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
