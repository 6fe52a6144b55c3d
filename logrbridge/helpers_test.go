package logrbridge

import (
	"encoding/json"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus/internal/syncbuf"
)

// jsonHandler is the stdlib JSON handler at level -20 with source, writing
// into a fresh buffer.
func jsonHandler(level slog.Level) (*slog.JSONHandler, *syncbuf.Buffer) {
	var buf syncbuf.Buffer
	return slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level, AddSource: true}), &buf
}

// lines decodes every JSON line of out.
func lines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var res []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		m := map[string]any{}
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		res = append(res, m)
	}
	return res
}

// one decodes the single JSON line of out.
func one(t *testing.T, out string) map[string]any {
	t.Helper()
	ls := lines(t, out)
	require.Len(t, ls, 1, out)
	return ls[0]
}

// here returns the file and line of its caller.
func here() (string, int) {
	_, file, line, _ := runtime.Caller(1)
	return file, line
}

// sourceOf returns the file and line of a decoded record's source.
func sourceOf(t *testing.T, m map[string]any) (string, int) {
	t.Helper()
	src, ok := m["source"].(map[string]any)
	require.True(t, ok, "no source in %v", m)
	return src["file"].(string), int(src["line"].(float64))
}
