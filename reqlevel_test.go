package asyncbus

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus/internal/reqlevel"
)

// Tests of reqlevel.go: a request level carried by the context
// (ctxattrs.WithLevel, which cannot be imported here: it sets
// reqlevel.With) lowers the handler's level for the records logged with that
// context, in Enabled and Handle, for every derived handler and whatever the
// logger's rule.

func TestRequestLevelLowersTheLevelForItsContext(t *testing.T) {
	bg := context.Background()
	debug := reqlevel.With(bg, slog.LevelDebug)
	tests := []struct {
		name  string
		ctx   context.Context
		level slog.Level
		want  bool
	}{
		{"no request level: debug below the level", bg, slog.LevelDebug, false},
		{"no request level: info at the level", bg, slog.LevelInfo, true},
		{"request debug: debug let through", debug, slog.LevelDebug, true},
		{"request debug: trace still below", debug, LevelTrace, false},
		{"request debug: info written anyway", debug, slog.LevelInfo, true},
		{"request warn: hides nothing the handler writes", reqlevel.With(bg, slog.LevelWarn), slog.LevelInfo, true},
		{"request warn: debug still below", reqlevel.With(bg, slog.LevelWarn), slog.LevelDebug, false},
		{"nested: inner trace lowers further", reqlevel.With(debug, LevelTrace), LevelTrace, true},
		{"nested: inner info replaces outer debug", reqlevel.With(debug, slog.LevelInfo), slog.LevelDebug, false},
		{"context below a request level keeps it", context.WithValue(debug, struct{ k int }{1}, 2), slog.LevelDebug, true},
	}
	derived := []struct {
		name   string
		derive func(*Handler) slog.Handler
	}{
		{"root", func(h *Handler) slog.Handler { return h }},
		{"WithAttrs", func(h *Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.Int("a", 1)}) }},
		{"WithGroup", func(h *Handler) slog.Handler { return h.WithGroup("g") }},
		{"Named", func(h *Handler) slog.Handler { return h.Named("db") }},
	}
	for _, d := range derived {
		for _, tc := range tests {
			t.Run(d.name+"/"+tc.name, func(t *testing.T) {
				var out memSink
				h := NewHandler(&out, &Options{ReplaceAttr: dropTime})
				l := slog.New(d.derive(h))
				assert.Equal(t, tc.want, l.Handler().Enabled(tc.ctx, tc.level), "Enabled")
				l.Log(tc.ctx, tc.level, "m")
				require.NoError(t, h.Close())
				if tc.want {
					assert.Len(t, out.Lines(), 1, "written")
				} else {
					assert.Empty(t, out.Lines(), "not written")
				}
			})
		}
	}
}

// dropTime removes the time, for fixed output.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func TestRequestLevelOverridesStricterLoggerRules(t *testing.T) {
	var out memSink
	rules := MustParseLevelRules("info,db=warn,http=debug")
	h := NewHandler(&out, &Options{Rules: rules, ReplaceAttr: dropTime})
	debug := reqlevel.With(context.Background(), slog.LevelDebug)
	for _, name := range []string{"db", "http", "api"} {
		l := slog.New(h.Named(name))
		l.DebugContext(context.Background(), "plain debug")
		l.InfoContext(context.Background(), "plain info")
		l.DebugContext(debug, "request debug")
		l.Log(debug, LevelTrace, "request trace")
	}
	require.NoError(t, h.Close())
	assert.Equal(t, []string{
		// db=warn: only the request's debug
		`{"level":"DEBUG","msg":"request debug","logger":"db"}`,
		// http=debug: its own debug and the request's
		`{"level":"DEBUG","msg":"plain debug","logger":"http"}`,
		`{"level":"INFO","msg":"plain info","logger":"http"}`,
		`{"level":"DEBUG","msg":"request debug","logger":"http"}`,
		// api, the default info
		`{"level":"INFO","msg":"plain info","logger":"api"}`,
		`{"level":"DEBUG","msg":"request debug","logger":"api"}`,
	}, out.Lines())
}

func TestRequestLevelWithDynamicLevel(t *testing.T) {
	var lv slog.LevelVar
	lv.Set(slog.LevelError)
	var out memSink
	h := NewHandler(&out, &Options{Level: &lv, ReplaceAttr: dropTime})
	l := slog.New(h)
	debug := reqlevel.With(context.Background(), slog.LevelDebug)
	l.InfoContext(context.Background(), "hidden")
	l.InfoContext(debug, "shown")
	require.NoError(t, h.Close())
	assert.Equal(t, []string{`{"level":"INFO","msg":"shown"}`}, out.Lines())
}

func TestRequestLevelRecordIsWrittenNotKeptByTheFlightRecorder(t *testing.T) {
	var out memSink
	h := NewHandler(&out, &Options{Features: FeatureOptions{FlightRecorder: &FlightRecorder{}}, ReplaceAttr: dropTime})
	l := slog.New(h)
	debug := reqlevel.With(context.Background(), slog.LevelDebug)
	l.DebugContext(context.Background(), "kept")
	l.DebugContext(debug, "written")
	l.Log(debug, LevelTrace, "below both")
	// otelbridge's path (HandleAttrs) decides the same way.
	require.NoError(t, h.handleAttrs(debug, time.Time{}, slog.LevelDebug, "written by HandleAttrs", nil))
	require.NoError(t, h.handleAttrs(context.Background(), time.Time{}, slog.LevelDebug, "kept by HandleAttrs", nil))
	require.NoError(t, h.Close())
	assert.Equal(t, []string{
		`{"level":"DEBUG","msg":"written"}`,
		`{"level":"DEBUG","msg":"written by HandleAttrs"}`,
	}, out.Lines())
	st := h.Stats()
	assert.Equal(t, uint64(2), st.RecorderKept)
	assert.Equal(t, uint64(2), st.Written)
}

// TestRequestLevelConcurrentRequests runs requests at different levels at
// once: each request's records are written exactly when its own level (or
// the handler's) lets them through.
func TestRequestLevelConcurrentRequests(t *testing.T) {
	var out memSink
	h := NewHandler(&out, &Options{ReplaceAttr: dropTime})
	l := slog.New(h)
	levels := []struct {
		set   bool
		level slog.Level
	}{{false, 0}, {true, LevelTrace}, {true, slog.LevelDebug}, {true, slog.LevelWarn}}
	const requests, perRequest = 16, 50
	var wg sync.WaitGroup
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			if lv := levels[i%len(levels)]; lv.set {
				ctx = reqlevel.With(ctx, lv.level)
			}
			for j := range perRequest {
				for _, lvl := range []slog.Level{LevelTrace, slog.LevelDebug, slog.LevelInfo} {
					l.LogAttrs(ctx, lvl, "m", slog.Int("req", i), slog.Int("j", j))
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, h.Close())
	got := map[string]int{} // "req level" -> lines
	for _, line := range out.Lines() {
		lvl, _, _ := strings.Cut(strings.TrimPrefix(line, `{"level":"`), `"`)
		var req int
		_, err := fmt.Sscanf(line[strings.Index(line, `"req":`):], `"req":%d`, &req)
		require.NoError(t, err, line)
		got[fmt.Sprint(req, " ", lvl)]++
	}
	want := map[string]int{}
	for i := range requests {
		want[fmt.Sprint(i, " INFO")] = perRequest
		switch i % len(levels) {
		case 1:
			want[fmt.Sprint(i, " DEBUG-4")] = perRequest
			want[fmt.Sprint(i, " DEBUG")] = perRequest
		case 2:
			want[fmt.Sprint(i, " DEBUG")] = perRequest
		}
	}
	assert.Equal(t, want, got)
}
