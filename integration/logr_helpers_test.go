package integration

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/logrbridge"
)

// logrBuffer is a goroutine-safe buffer.
type logrBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logrBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logrBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logrBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}

// logrCaller renders a record's source as "dir/file.go:line" under key
// "caller" (zapr's short caller) and drops the time, so output is stable.
func logrCaller(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		return slog.Attr{}
	case slog.SourceKey:
		src, ok := a.Value.Any().(*slog.Source)
		if !ok || src == nil {
			return a
		}
		short := filepath.Base(filepath.Dir(src.File)) + "/" + filepath.Base(src.File)
		return slog.String("caller", short+":"+strconv.Itoa(src.Line))
	}
	return a
}

// logrJSONHandler is the slog JSON handler, with the caller and without time.
func logrJSONHandler(w io.Writer, level slog.Level) slog.Handler {
	return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, AddSource: true, ReplaceAttr: logrCaller})
}

// logrKind names a backend under test.
type logrKind struct {
	name string
	// newLogger returns a logger writing JSON lines with caller and without
	// time into w, with every record written before the logging call returns,
	// and a function releasing its resources.
	newLogger func(w io.Writer, level slog.Level, opts ...logrbridge.Option) (logr.Logger, func())
}

var logrKinds = []logrKind{{
	name: "slog.JSONHandler",
	newLogger: func(w io.Writer, level slog.Level, opts ...logrbridge.Option) (logr.Logger, func()) {
		return logrbridge.NewLogger(logrJSONHandler(w, level), opts...), func() {}
	},
}, {
	name: "asyncbus",
	newLogger: func(w io.Writer, level slog.Level, opts ...logrbridge.Option) (logr.Logger, func()) {
		h := asyncbus.NewHandler(w, &asyncbus.Options{
			Level:       level,
			AddSource:   true,
			ReplaceAttr: logrCaller,
			// Every record is written before Handle returns: the klog
			// suite reads its buffer right after logging.
			SyncLevel: slog.Level(-1000),
		})
		return logrbridge.NewLogger(h, opts...), func() { _ = h.Close() }
	},
}}

// logrLines decodes every JSON line of out.
func logrLines(t *testing.T, out string) []map[string]any {
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

// here returns the file and line of its caller.
func here() (string, int) {
	_, file, line, _ := runtime.Caller(1)
	return file, line
}

func itoa(i int) string { return strconv.Itoa(i) }
