package asyncbus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of recorder.go: the flight recorder keeps records below the level,
// writes them before a trigger between markers, per request group, and
// bounds them by age and size.

// jsonLines decodes every line of out.
func jsonLines(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(l, &m), "%s", l)
		lines = append(lines, m)
	}
	return lines
}

// msgs lists the lines' messages.
func msgs(lines []map[string]any) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l["msg"].(string))
	}
	return out
}

func TestFlightRecorderWritesKeptRecordsBeforeTheTrigger(t *testing.T) {
	var out memSink
	h := NewHandler(&out, &Options{Features: FeatureOptions{FlightRecorder: &FlightRecorder{}}})
	log := slog.New(h)
	log.Debug("d1", "k", 1)
	log.Log(context.Background(), LevelTrace, "t1") // below the recorder's level: neither kept nor written
	log.Info("i1")
	log.With("conn", 7).Debug("d2") // a derived handler shares the recorder
	log.Error("e1")
	log.Error("e2") // nothing kept since e1
	require.NoError(t, h.Close())

	lines := jsonLines(t, []byte(out.String()))
	assert.Equal(t, []string{"i1", "asyncbus: flight recorder: records kept before the next one", "d1", "d2",
		"asyncbus: flight recorder: end", "e1", "e2"}, msgs(lines))
	assert.EqualValues(t, 2, lines[1]["records"])
	assert.Equal(t, "WARN", lines[1]["level"])
	assert.Equal(t, "DEBUG", lines[2]["level"])
	assert.EqualValues(t, 1, lines[2]["k"])
	assert.EqualValues(t, 7, lines[3]["conn"])
	assert.EqualValues(t, 2, lines[4]["records"])

	st := h.Stats()
	assert.EqualValues(t, 2, st.RecorderKept)
	assert.EqualValues(t, 2, st.RecorderWritten)
	assert.Zero(t, st.RecorderExpired)
	assert.EqualValues(t, 3, st.Enqueued, "i1, e1 with its kept records as one entry, e2")
	assert.Equal(t, st.Enqueued, st.Written)
}

func TestFlightRecorderOffCostsNothingAndKeepsNothing(t *testing.T) {
	var out memSink
	h := NewHandler(&out, nil)
	assert.False(t, h.Enabled(context.Background(), slog.LevelDebug))
	slog.New(h).Error("e")
	require.NoError(t, h.Close())
	assert.Equal(t, []string{"e"}, msgs(jsonLines(t, []byte(out.String()))))
	assert.Zero(t, h.Stats().RecorderKept)
}

// requestKey carries a test request's id in a context.
type requestKey struct{}

func requestGroup(ctx context.Context) (id [16]byte, ok bool) {
	n, ok := ctx.Value(requestKey{}).(int)
	if !ok {
		return id, false
	}
	copy(id[:], fmt.Sprintf("req-%d", n))
	return id, true
}

// TestFlightRecorderPerRequest: with concurrent requests, each failing
// request's output holds exactly its own kept Debug records, in order,
// between the markers before its Error, and no other request's.
func TestFlightRecorderPerRequest(t *testing.T) {
	const requests, debugs = 16, 20
	var out memSink
	h := NewHandler(&out, &Options{Features: FeatureOptions{FlightRecorder: &FlightRecorder{Group: requestGroup}}})
	log := slog.New(h)
	var wg sync.WaitGroup
	for req := range requests {
		wg.Go(func() {
			ctx := context.WithValue(context.Background(), requestKey{}, req)
			for i := range debugs {
				log.DebugContext(ctx, "step", "req", req, "i", i)
			}
			if req%2 == 0 {
				log.ErrorContext(ctx, "failed", "req", req)
			} else {
				log.InfoContext(ctx, "ok", "req", req)
			}
		})
	}
	wg.Wait()
	require.NoError(t, h.Close())

	lines := jsonLines(t, []byte(out.String()))
	failed := 0
	for i, l := range lines {
		switch l["msg"] {
		case "step":
			continue // checked from its block
		case "failed":
			failed++
			req := l["req"]
			require.GreaterOrEqual(t, i, debugs+2, "the error is preceded by its block")
			block := lines[i-debugs-2 : i]
			require.Equal(t, "asyncbus: flight recorder: records kept before the next one", block[0]["msg"], "request %v", req)
			assert.EqualValues(t, debugs, block[0]["records"])
			for k, d := range block[1 : debugs+1] {
				require.Equal(t, "step", d["msg"])
				require.Equal(t, req, d["req"], "only the failing request's own records")
				require.EqualValues(t, k, d["i"], "in order")
			}
			require.Equal(t, "asyncbus: flight recorder: end", block[debugs+1]["msg"])
		}
	}
	assert.Equal(t, requests/2, failed)
	steps := 0
	for _, l := range lines {
		if l["msg"] == "step" {
			steps++
			assert.Zero(t, int(l["req"].(float64))%2, "a succeeding request's records are never written")
		}
	}
	assert.Equal(t, requests/2*debugs, steps)
	st := h.Stats()
	assert.EqualValues(t, requests*debugs, st.RecorderKept)
	assert.EqualValues(t, requests/2*debugs, st.RecorderWritten)
}

// TestFlightRecorderBounds: records older than MaxAge, and those pushed out
// by newer ones when the ring is full (it wraps many times), are never
// written and are counted as expired; what is written is the newest
// records, in order.
func TestFlightRecorderBounds(t *testing.T) {
	t.Run("age", func(t *testing.T) {
		var out memSink
		h := NewHandler(&out, &Options{Features: FeatureOptions{FlightRecorder: &FlightRecorder{MaxAge: time.Minute}}})
		ctx := context.Background()
		old := slog.NewRecord(time.Now().Add(-2*time.Minute), slog.LevelDebug, "old", 0)
		fresh := slog.NewRecord(time.Now(), slog.LevelDebug, "fresh", 0)
		require.NoError(t, h.Handle(ctx, old))
		require.NoError(t, h.Handle(ctx, fresh))
		require.NoError(t, h.Handle(ctx, slog.NewRecord(time.Now(), slog.LevelError, "e", 0)))
		require.NoError(t, h.Close())
		m := msgs(jsonLines(t, []byte(out.String())))
		assert.Equal(t, []string{"asyncbus: flight recorder: records kept before the next one", "fresh", "asyncbus: flight recorder: end", "e"}, m)
		st := h.Stats()
		assert.EqualValues(t, 2, st.RecorderKept)
		assert.EqualValues(t, 1, st.RecorderWritten)
		assert.EqualValues(t, 1, st.RecorderExpired)
	})
	t.Run("size", func(t *testing.T) {
		for _, size := range []int{256, 1000, 4096} {
			var out memSink
			h := NewHandler(&out, &Options{Features: FeatureOptions{FlightRecorder: &FlightRecorder{Size: size}}})
			log := slog.New(h)
			const n = 500
			for i := range n {
				log.Debug("d", "i", i, "pad", strings.Repeat("x", i%37)) // varying sizes: every wrap offset
			}
			log.Error("e")
			log.Debug("too large", "pad", strings.Repeat("y", size))
			require.NoError(t, h.Close())
			lines := jsonLines(t, []byte(out.String()))
			require.GreaterOrEqual(t, len(lines), 4, "size %d", size)
			kept := lines[1 : len(lines)-2]
			first := int(kept[0]["i"].(float64))
			for k, l := range kept {
				require.EqualValues(t, first+k, l["i"], "size %d: the newest records, in order", size)
			}
			assert.EqualValues(t, n-1, first+len(kept)-1, "size %d: up to the last one", size)
			st := h.Stats()
			assert.EqualValues(t, n, st.RecorderKept, "size %d: the too-large one is not kept", size)
			assert.EqualValues(t, len(kept), st.RecorderWritten)
			assert.EqualValues(t, st.RecorderKept+1, st.RecorderWritten+st.RecorderExpired, "size %d: pushed out, and the too-large one, counted once each", size)
		}
	})
}

// TestFlightRecorderRespectsRulesAndTriggerLevel: a logger whose rule lets
// Debug through writes it (not kept); a custom trigger level.
func TestFlightRecorderRespectsRulesAndTriggerLevel(t *testing.T) {
	rules, err := ParseLevelRules("info,db=debug")
	require.NoError(t, err)
	var out memSink
	h := NewHandler(&out, &Options{Rules: rules, Features: FeatureOptions{FlightRecorder: &FlightRecorder{Trigger: slog.LevelWarn}}})
	slog.New(h.Named("db")).Debug("db debug")   // written: the rule allows it
	slog.New(h.Named("api")).Debug("api debug") // kept
	slog.New(h).Warn("w")                       // triggers
	require.NoError(t, h.Close())
	assert.Equal(t, []string{"db debug", "asyncbus: flight recorder: records kept before the next one", "api debug",
		"asyncbus: flight recorder: end", "w"}, msgs(jsonLines(t, []byte(out.String()))))
}

// TestFlightRecorderKeepsWithoutAllocating: a kept Debug record costs no
// allocation.
func TestFlightRecorderKeepsWithoutAllocating(t *testing.T) {
	h := NewHandler(io.Discard, &Options{Features: FeatureOptions{FlightRecorder: &FlightRecorder{Size: 64 << 10}}})
	defer h.Close()
	log := slog.New(h)
	allocs := testing.AllocsPerRun(1000, func() { log.Debug("kept", "k", 1, "s", "v") })
	assert.Zero(t, allocs)
}

func TestFlightRecorderOptionsValidated(t *testing.T) {
	for _, fr := range []FlightRecorder{{Size: -1}, {Size: maxRecorderSize + 1}, {MaxAge: -time.Second}, {Level: (*slog.LevelVar)(nil)}} {
		_, err := Open(&bytes.Buffer{}, &Options{Features: FeatureOptions{FlightRecorder: &fr}})
		assert.ErrorContains(t, err, "Options.Features.FlightRecorder.", "%+v", fr)
	}
}

// recorderBooks checks that every kept record ended written, expired or
// lost (no record here is larger than the recorder).
func recorderBooks(t *testing.T, st Stats) {
	t.Helper()
	assert.Equal(t, st.RecorderKept, st.RecorderWritten+st.RecorderExpired+st.RecorderLost, "%+v", st)
}

// TestFlightRecorderAtClose: after Close a below-level record
// was kept (Handle returned nil, RecorderKept grew) where the docs say
// ErrClosed, and a trigger after Close counted its kept records as
// written. Now Close ends the recorder: what it still keeps counts as
// expired, a later below-level record is refused like any other
// (ErrClosed, counted, reported), and a later trigger takes nothing.
func TestFlightRecorderAtClose(t *testing.T) {
	tests := []struct {
		name  string
		after slog.Level // logged after Close
	}{
		{"a below-level record", slog.LevelDebug},
		{"a trigger", slog.LevelError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out memSink
			var reports []error
			h := NewHandler(&out, &Options{Features: FeatureOptions{FlightRecorder: &FlightRecorder{}}, OnError: func(err error) { reports = append(reports, err) }})
			log := slog.New(h)
			log.Debug("kept 1")
			log.Debug("kept 2")
			require.NoError(t, h.Close())
			st := h.Stats()
			assert.EqualValues(t, 2, st.RecorderExpired, "still kept at Close: never written")
			recorderBooks(t, st)

			err := h.Handle(context.Background(), slog.NewRecord(time.Now(), tt.after, "after Close", 0))
			require.ErrorIs(t, err, ErrClosed)
			require.Len(t, reports, 1, "reported before Handle returned")
			assert.ErrorContains(t, reports[0], `msg "after Close"`)
			st = h.Stats()
			assert.EqualValues(t, 2, st.RecorderKept, "not kept")
			assert.Zero(t, st.RecorderWritten)
			assert.EqualValues(t, 1, st.DroppedClosed)
			recorderBooks(t, st)
			assert.Empty(t, out.Lines())
		})
	}
}

// TestFlightRecorderTriggerRefused: a trigger dropped in Drop
// mode counted its kept records as written, and they appeared nowhere.
// They now count as lost with it.
func TestFlightRecorderTriggerRefused(t *testing.T) {
	w := &hungOutput{entered: make(chan struct{}, 1), release: make(chan struct{})}
	h := NewHandler(w, &Options{Ring: RingOptions{Capacity: 4096, Overflow: Drop}, Features: FeatureOptions{FlightRecorder: &FlightRecorder{}}, OnError: func(error) {}})
	log := slog.New(h)
	log.Info("in the output's hands")
	<-w.entered
	for i := 0; log.Handler().Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelInfo, "fill", 0)) == nil; i++ {
		require.Less(t, i, 4096, "the ring never filled")
	}
	log.Debug("kept 1")
	log.Debug("kept 2")
	err := h.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelError, "trigger", 0))
	require.ErrorIs(t, err, ErrDropped)
	st := h.Stats()
	assert.EqualValues(t, 2, st.RecorderLost)
	assert.Zero(t, st.RecorderWritten)
	recorderBooks(t, st)
	close(w.release)
	require.NoError(t, h.Close())
	assert.NotContains(t, out(w), "kept 1")
	recorderBooks(t, h.Stats())
}
