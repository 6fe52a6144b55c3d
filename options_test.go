package asyncbus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOptionsValidation: one set of rules, checked in one place. Open
// refuses an invalid option with an error naming it; NewHandler reports the
// same error to OnError, uses the default, and logs.
func TestOptionsValidation(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"negative capacity", Options{Ring: RingOptions{Capacity: -1}}, "Options.Ring.Capacity -1"},
		{"huge capacity", Options{Ring: RingOptions{Capacity: maxCapacity + 1}}, "Options.Ring.Capacity"},
		// Below the minimum every record would take the oversize path.
		{"tiny capacity", Options{Ring: RingOptions{Capacity: 3}}, "Options.Ring.Capacity 3 is outside [4096, 1073741824] bytes (0 means the default, 8388608)"},
		{"capacity just below the minimum", Options{Ring: RingOptions{Capacity: minCapacity - 1}}, "Options.Ring.Capacity 4095 is outside [4096, 1073741824]"},
		{"bad overflow", Options{Ring: RingOptions{Overflow: 7}}, "Options.Ring.Overflow 7"},
		{"negative timeout", Options{Ring: RingOptions{BlockTimeout: -1}}, "Options.Ring.BlockTimeout"},
		{"negative latency", Options{Ring: RingOptions{MaxLatency: -1}}, "Options.Ring.MaxLatency"},
		{"watermark > 1", Options{Ring: RingOptions{HighWatermark: 1.5}}, "Options.Ring.HighWatermark 1.5"},
		{"watermark < 0", Options{Ring: RingOptions{HighWatermark: -0.1}}, "Options.Ring.HighWatermark"},
		{"watermark NaN", Options{Ring: RingOptions{HighWatermark: math.NaN()}}, "Options.Ring.HighWatermark NaN"},
		{"bad format", Options{Format: 42}, "Options.Format 42"},
		{"bad color", Options{Encoding: EncodingOptions{Color: 9}}, "Options.Encoding.Color 9"},
		{"negative write attempts", Options{Retry: RetryOptions{Attempts: -2}}, "Options.Retry.Attempts -2"},
		{"negative retry max", Options{Retry: RetryOptions{MaxBackoff: -time.Second}}, "Options.Retry.MaxBackoff -1s"},
		{"nil Level", Options{Level: (*slog.LevelVar)(nil)}, "Options.Level is a nil *slog.LevelVar"},
		{"nil SyncLevel", Options{SyncLevel: (*slog.LevelVar)(nil)}, "Options.SyncLevel is a nil *slog.LevelVar"},
		{"nil StackTraceLevel", Options{Features: FeatureOptions{StackTraceLevel: (*slog.LevelVar)(nil)}}, "Options.Features.StackTraceLevel is a nil *slog.LevelVar"},
		{"Drop with BlockTimeout", Options{Ring: RingOptions{Overflow: Drop, BlockTimeout: time.Second}}, "Options.Ring.BlockTimeout 1s has no effect with Overflow Drop, which never waits"},
		// Level Error would hide "still logged": the rules' info applies.
		{"Level with Rules", Options{Level: slog.LevelError, Rules: MustParseLevelRules("info,db=debug")}, `Options.Level has no effect when Options.Rules is set: the rules "info,db=debug" give every level`},
		{"LevelVar with Rules", Options{Level: new(slog.LevelVar), Rules: MustParseLevelRules("")}, "Options.Level has no effect when Options.Rules is set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			opts := tc.opts
			h, err := Open(&out, &opts)
			require.Nil(t, h)
			require.ErrorContains(t, err, "asyncbus: "+tc.want)
			assert.True(t, strings.HasSuffix(err.Error(), "; Open refused it"), "Open says what it did: %v", err)
			assert.NotContains(t, err.Error(), "using", "Open uses no default")

			var reported []error
			opts.OnError = func(err error) { reported = append(reported, err) }
			h = NewHandler(&out, &opts)
			slog.New(h).Info("still logged")
			require.NoError(t, h.Close())
			require.Len(t, reported, 1)
			assert.ErrorContains(t, reported[0], tc.want)
			assert.NotContains(t, reported[0].Error(), "Open", "NewHandler says what it uses instead")
			assert.Contains(t, out.String(), `"msg":"still logged"`)
		})
	}

	t.Run("what NewHandler does instead", func(t *testing.T) {
		insteads := []struct {
			opts Options
			want string
		}{
			{Options{Ring: RingOptions{Capacity: 3}}, "; using 8388608"},
			{Options{Ring: RingOptions{Overflow: Drop, BlockTimeout: time.Second}}, "; ignoring it"},
			{Options{Level: slog.LevelError, Rules: MustParseLevelRules("info")}, "; ignoring Level (set the default level in the rules)"},
			{Options{Format: 42}, "; using JSON"},
		}
		for _, tc := range insteads {
			var reported []error
			tc.opts.OnError = func(err error) { reported = append(reported, err) }
			require.NoError(t, NewHandler(&bytes.Buffer{}, &tc.opts).Close())
			require.Len(t, reported, 1)
			assert.True(t, strings.HasSuffix(reported[0].Error(), tc.want), "%v", reported[0])
		}
	})

	t.Run("nil writer", func(t *testing.T) {
		_, err := Open(nil, nil)
		require.EqualError(t, err, "asyncbus: the output is nil; Open refused it")
		var reported []error
		h := NewHandler(nil, &Options{OnError: func(err error) { reported = append(reported, err) }})
		require.NoError(t, h.Close())
		require.Len(t, reported, 1)
	})

	t.Run("several at once", func(t *testing.T) {
		_, err := Open(&bytes.Buffer{}, &Options{Ring: RingOptions{Capacity: -1, MaxLatency: -1}})
		require.ErrorContains(t, err, "Options.Ring.Capacity")
		require.ErrorContains(t, err, "Options.Ring.MaxLatency")
	})

	t.Run("valid", func(t *testing.T) {
		h, err := Open(&bytes.Buffer{}, &Options{Ring: RingOptions{Capacity: 5000, HighWatermark: 1, Overflow: Drop}})
		require.NoError(t, err)
		assert.EqualValues(t, 8192, h.Stats().Capacity, "rounded up to a power of two")
		require.NoError(t, h.Close())
	})
}

// nilLeveler is a user Leveler whose nil pointer panics in Level.
type nilLeveler struct{ l slog.Level }

func (n *nilLeveler) Level() slog.Level { return n.l }

// TestNilLevelersUseTheDefault: a Leveler option holding a nil pointer (an
// unset *slog.LevelVar field) is reported once and replaced by the
// option's default, so Handle neither panics nor changes behaviour: Info
// and above written, FATAL synced, no stack trace.
func TestNilLevelersUseTheDefault(t *testing.T) {
	var nilVar *slog.LevelVar
	var nilUser *nilLeveler
	for _, nilValue := range []slog.Leveler{nilVar, nilUser} {
		for _, tc := range []struct {
			name string
			set  func(*Options, slog.Leveler)
		}{
			{"Level", func(o *Options, l slog.Leveler) { o.Level = l }},
			{"SyncLevel", func(o *Options, l slog.Leveler) { o.SyncLevel = l }},
			{"Features.StackTraceLevel", func(o *Options, l slog.Leveler) { o.Features.StackTraceLevel = l }},
		} {
			t.Run(fmt.Sprintf("%s/%T", tc.name, nilValue), func(t *testing.T) {
				var reported []error
				var sink memSink
				opts := &Options{OnError: func(err error) { reported = append(reported, err) }}
				tc.set(opts, nilValue)
				h := NewHandler(&sink, opts)
				l := slog.New(h)
				require.NotPanics(t, func() {
					l.Debug("below the default level")
					l.Info("info")
					l.Error("error")
				})
				syncs := sink.Syncs()
				require.NoError(t, h.Handle(context.Background(), slog.NewRecord(time.Now(), LevelFatal, "fatal", 0)))
				assert.Greater(t, sink.Syncs(), syncs, "FATAL is synced before Handle returns")
				require.NoError(t, h.Close())

				require.Len(t, reported, 1)
				assert.ErrorContains(t, reported[0], fmt.Sprintf("Options.%s is a nil %T whose Level panics", tc.name, nilValue))
				lines := sink.Lines()
				require.Len(t, lines, 3)
				for i, msg := range []string{"info", "error", "fatal"} {
					assert.Contains(t, lines[i], `"msg":"`+msg+`"`)
					assert.NotContains(t, lines[i], "stacktrace")
				}
			})
		}
	}
}

// TestPublicErrors: the errors a user sees are the root's, with its prefix.
func TestPublicErrors(t *testing.T) {
	var reports reportLog
	h := NewHandler(&bytes.Buffer{}, &Options{OnError: reports.onError})
	require.NoError(t, h.Close())
	err := slog.New(h).Handler().Handle(t.Context(), slog.NewRecord(time.Time{}, slog.LevelInfo, "late", 0))
	require.ErrorIs(t, err, ErrClosed)
	reports.requireClosedReport(t, "late")
	assert.Equal(t, "asyncbus: handler closed", err.Error())
	assert.True(t, errors.Is(err, ErrClosed))
	assert.Equal(t, "asyncbus: ring full, record dropped", ErrDropped.Error())
}

// outageWriter fails its first failures writes, then works: an output with
// a passing outage (a full disk being cleaned, a network file system
// hiccup).
type outageWriter struct {
	mu       sync.Mutex
	failures int
	calls    int
	buf      bytes.Buffer
}

var errOutage = errors.New("output unavailable")

func (w *outageWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	if w.calls <= w.failures {
		return 0, errOutage
	}
	return w.buf.Write(p)
}

// end ends the outage: every later write succeeds.
func (w *outageWriter) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failures = w.calls
}

func (w *outageWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestWriteAttempts: an outage of six failed writes loses the batch with
// the default four attempts (counted in Stats.Failed and reported), and
// nothing with WriteAttempts 7 (Flush still returns after four attempts,
// with the records queued).
func TestWriteAttempts(t *testing.T) {
	tests := []struct {
		name     string
		attempts int
		failed   uint64
	}{
		{"default: 4 attempts", 0, 3},
		{"7 attempts ride it out", 7, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &outageWriter{failures: 6}
			var reports atomic.Int64
			h := NewHandler(w, &Options{
				// MaxBackoff keeps the test fast: 1 ms between attempts.
				Retry: RetryOptions{Attempts: tt.attempts, MaxBackoff: time.Millisecond},
				// Drop mode; the records wait quietly, until the output
				// counts as failing, then are queued.
				Ring:    RingOptions{MaxLatency: time.Hour, Overflow: Drop},
				OnError: func(error) { reports.Add(1) },
			})
			l := slog.New(h)
			for i := range 3 {
				l.Info("during the outage", "i", i)
			}
			err := h.Flush()
			closeErr := h.Close()
			st := h.Stats()
			if tt.failed > 0 {
				require.ErrorIs(t, closeErr, errOutage, "Close reports the lost batch too")
				assert.ErrorContains(t, closeErr, fmt.Sprintf("(%d records failed)", tt.failed))
			} else {
				require.NoError(t, closeErr, "nothing was lost")
			}
			assert.Equal(t, tt.failed, st.Failed)
			assert.Equal(t, 3-tt.failed, st.Written)
			require.ErrorIs(t, err, errOutage, "Flush reports the outage")
			if tt.failed > 0 {
				assert.NotErrorIs(t, err, ErrRetrying, "the batch was given up")
				assert.Empty(t, w.String())
			} else {
				assert.ErrorIs(t, err, ErrRetrying, "Flush returned after the default four attempts; the records stayed queued")
				assert.Equal(t, 3, strings.Count(w.String(), "during the outage"))
			}
			assert.Positive(t, reports.Load(), "each outage is reported")
		})
	}
}

// TestRaisedWriteAttemptsDoNotHoldCallers: a budget of a million attempts
// keeps the records of an outage, but an Error record (written before
// Handle returns) and Flush do not wait for the whole budget: once the
// default four attempts are spent they return the output's error, and the
// records are written when the output comes back.
func TestRaisedWriteAttemptsDoNotHoldCallers(t *testing.T) {
	w := &brokenOutput{}
	w.broken.Store(true)
	h := NewHandler(w, &Options{Retry: RetryOptions{Attempts: 1 << 20, MaxBackoff: time.Millisecond}, OnError: func(error) {}})
	l := slog.New(h)
	l.Info("before the error")
	r := slog.NewRecord(time.Now(), slog.LevelError, "the error", 0)
	start := time.Now()
	require.NoError(t, h.Handle(context.Background(), r), "the output is failing: the Error wait is skipped, the record queued")
	assert.Less(t, time.Since(start), time.Second, "not held by the retries")
	err := h.Flush()
	require.ErrorIs(t, err, errOutput)
	require.ErrorIs(t, err, ErrRetrying)
	assert.Zero(t, h.Stats().Failed, "nothing is given up while the budget lasts")

	w.broken.Store(false)
	require.NoError(t, h.Close())
	st := h.Stats()
	assert.Zero(t, st.Failed)
	assert.EqualValues(t, 2, st.Written)
	assert.Contains(t, w.String(), "before the error")
	assert.Contains(t, w.String(), "the error")
}

// envLevel is a Leveler whose nil pointer is valid: a nil *envLevel means
// Warn (a pointer-receiver method that handles nil, a common Go idiom).
type envLevel struct{ l slog.Level }

func (e *envLevel) Level() slog.Level {
	if e == nil {
		return slog.LevelWarn
	}
	return e.l
}

// A nil pointer Leveler whose Level works is kept, and not reported: only
// one whose Level panics (a nil *slog.LevelVar) is replaced.
func TestNilLevelerThatWorksIsKept(t *testing.T) {
	var reported []error
	var sink memSink
	var lv *envLevel
	h := NewHandler(&sink, &Options{Level: lv, OnError: func(err error) { reported = append(reported, err) }})
	l := slog.New(h)
	l.Info("below Warn")
	l.Warn("at Warn")
	require.NoError(t, h.Close())
	assert.Empty(t, reported)
	lines := sink.Lines()
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `"msg":"at Warn"`)
}

// TestOptionsUniqueKeys: with UniqueKeys the Context fields, the WithAttrs
// state and the record share one set of keys (first position, last value),
// in a cloud preset too; without it the repeats are written as slog writes
// them.
func TestOptionsUniqueKeys(t *testing.T) {
	hook := func(_ context.Context, w *FieldWriter) { w.AddString("req", "from-context") }
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Format: Text, Encoding: EncodingOptions{UniqueKeys: true}, Features: FeatureOptions{Context: hook}}, `level=INFO msg=hi req=record user=bob` + "\n"},
		{Options{Format: ECSJSON, Encoding: EncodingOptions{UniqueKeys: true}, Features: FeatureOptions{Context: hook}}, `{"log.level":"info","message":"hi","ecs.version":"1.6.0","req":"record","user":"bob"}` + "\n"},
		{Options{Format: Text, Features: FeatureOptions{Context: hook}}, `level=INFO msg=hi req=from-context req=state user=bob req=record` + "\n"},
	} {
		var buf bytes.Buffer
		o := tc.opts
		o.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		}
		h := NewHandler(&buf, &o)
		slog.New(h).With("req", "state", "user", "bob").InfoContext(context.Background(), "hi", "req", "record")
		require.NoError(t, h.Close())
		assert.Equal(t, tc.want, buf.String(), "%+v", tc.opts.Format)
	}
}

// TestEnumsPrintTheirNames: %v of an option's enum value prints
// the name a user writes, not a number.
func TestEnumsPrintTheirNames(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{Block, "Block"},
		{Drop, "Drop"},
		{Overflow(5), "Overflow(5)"},
		{ColorAuto, "ColorAuto"},
		{ColorAlways, "ColorAlways"},
		{ColorNever, "ColorNever"},
		{ColorMode(-1), "ColorMode(-1)"},
		{JSON, "JSON"},
		{ZapConsole, "ZapConsole"},
		{DatadogJSON, "DatadogJSON"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, fmt.Sprintf("%v", tt.v))
		})
	}
}

// gateSink blocks every write until released, to fill the ring.
type gateSink struct {
	memSink
	gate chan struct{}
}

func (g *gateSink) Write(p []byte) (int, error) {
	<-g.gate
	return g.memSink.Write(p)
}

func TestDropModeAccountsForEveryRecord(t *testing.T) {
	sink := &gateSink{gate: make(chan struct{})}
	h := NewHandler(sink, &Options{Ring: RingOptions{Overflow: Drop, Capacity: 4 << 10}})
	const n = 500
	dropped := 0
	for i := range n {
		if err := h.Handle(context.Background(), recordAt(i)); err != nil {
			require.ErrorIs(t, err, ErrDropped)
			dropped++
		}
	}
	require.Positive(t, dropped, "a 4 KiB ring behind a stuck writer must overflow")
	close(sink.gate)
	require.NoError(t, h.Close())

	st := h.Stats()
	assert.EqualValues(t, n, st.Enqueued)
	assert.EqualValues(t, dropped, st.Dropped)
	assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed)

	written, markers, markerSum := 0, 0, 0
	for _, line := range sink.Lines() {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "the drop marker is valid JSON too: %s", line)
		if m["msg"] == "asyncbus: records dropped" {
			markers++
			markerSum += int(m["dropped"].(float64))
			continue
		}
		written++
	}
	assert.Positive(t, markers)
	assert.Equal(t, dropped, markerSum, "markers account for every drop")
	assert.EqualValues(t, written, st.Written)
	assert.Equal(t, n, written+markerSum, "the file plus the markers account for every record")
}

func recordAt(i int) slog.Record {
	r := slog.NewRecord(fixedTime, slog.LevelInfo, "request handled", 0)
	r.AddAttrs(slog.Int("seq", i), slog.String("path", "/api/v1/users/12345/orders"))
	return r
}

// TestOptionsTopLevelFields: Options keeps at most 12 top-level fields, so
// that a user can scan it; the others sit in its groups.
func TestOptionsTopLevelFields(t *testing.T) {
	assert.LessOrEqual(t, reflect.TypeFor[Options]().NumField(), 12)
}
