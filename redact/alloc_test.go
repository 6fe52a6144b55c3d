//go:build !race

// The race detector changes escape analysis: allocation counts are asserted
// only in the normal test run.

package redact_test

import (
	"log/slog"
	"testing"

	"github.com/asyncbus/asyncbus/redact"
	"github.com/stretchr/testify/assert"
)

// TestNoMatchAllocations: an attribute left alone costs no allocation,
// whatever its key's case, and neither does a key redaction.
func TestNoMatchAllocations(t *testing.T) {
	r := redact.New(refConfig)
	groups := []string{"Req", "Headers"}
	for _, a := range []slog.Attr{
		slog.String("user", "ann"),
		slog.String("UserAgent", "curl/8"),
		slog.String("Password", "x"),
		slog.String("authorization", "Basic x"),
		slog.Int("n", 1),
	} {
		assert.Zero(t, testing.AllocsPerRun(200, func() { _ = r.ReplaceAttr(groups, a) }), a.Key)
	}
}
