package logrbridge

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// lockedBuffer is a goroutine-safe bytes.Buffer.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// jsonHandler is the stdlib JSON handler at level -20 with source, writing
// into a fresh buffer.
func jsonHandler(level slog.Level) (*slog.JSONHandler, *lockedBuffer) {
	var buf lockedBuffer
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
