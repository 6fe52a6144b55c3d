package filesink_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the binary as crash_test.go's kill -9 child when started as
// one, and otherwise runs the tests with a check for leaked goroutines.
func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		os.Exit(crashChild(path))
	}
	goleak.VerifyTestMain(m)
}
