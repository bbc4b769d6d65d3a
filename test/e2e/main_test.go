//go:build e2e

package e2e

import (
	"os"
	"testing"

	"github.com/ontime-dev/ontime/test/framework"
)

// TestMain deletes the ontime binary the tests share once they have ended.
func TestMain(m *testing.M) {
	code := m.Run()
	framework.RemoveSharedOntime()
	os.Exit(code)
}
