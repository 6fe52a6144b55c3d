package benchmarks

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the tests and benchmarks, or, started by a benchmark as
// its load generator (loadClientEnv set), only the client side, in a
// process of its own, so that the server's measurements exclude it.
func TestMain(m *testing.M) {
	if addr := os.Getenv(loadClientEnv); addr != "" {
		if err := runLoadClient(addr); err != nil {
			fmt.Fprintln(os.Stderr, "load client:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
