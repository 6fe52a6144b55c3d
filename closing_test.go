package asyncbus

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestCloseReportsEveryFailure (issue 29 item 4): after Flush returned the
// output's error, Close returned nil, as if nothing had been lost. Close's
// error is now the run's verdict: every record that failed, whenever,
// with the total count, the same on every call; nil only when nothing was
// lost.
func TestCloseReportsEveryFailure(t *testing.T) {
	tests := []struct {
		name    string
		out     func() io.Writer
		failing int    // records logged while the output fails, then flushed
		after   int    // records logged after that Flush, flushed again
		want    error  // Close's error matches it
		wantMsg string // and ends with it
	}{
		{"nil writer", func() io.Writer { return nil }, 10, 0, errNilWriter, "asyncbus: write (nil writer): asyncbus: nil writer (10 records failed)"},
		{"nil writer, more after the Flush", func() io.Writer { return nil }, 10, 5, errNilWriter, "(15 records failed)"},
		{"output recovered", func() io.Writer { return &outageWriter{failures: 4} }, 3, 2, errOutage, ": output unavailable (3 records failed)"},
		{"nothing failed", func() io.Writer { return &outageWriter{} }, 0, 3, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			h := NewHandler(tt.out(), &Options{
				WriteRetryMax: time.Millisecond, // the default four attempts, 1 ms apart
				MaxLatency:    time.Hour,        // the records go as one batch at Flush
				Overflow:      Drop,             // no write-through: the drainer writes them
				OnError:       func(error) {},
			})
			l := slog.New(h)
			for i := range tt.failing {
				l.Info("during the outage", "i", i)
			}
			flushErr := h.Flush()
			if tt.failing > 0 {
				require.ErrorIs(t, flushErr, tt.want, "Flush reports the failure first")
			}
			for i := range tt.after {
				l.Info("after", "i", i)
			}
			if tt.want != errNilWriter {
				require.NoError(t, h.Flush(), "the output works again")
			}
			err := h.Close()
			st := h.Stats()
			if tt.want == nil {
				require.NoError(t, err)
				assert.Zero(t, st.Failed)
				return
			}
			require.ErrorIs(t, err, tt.want)
			assert.True(t, strings.HasSuffix(err.Error(), tt.wantMsg), "%q ends with %q", err, tt.wantMsg)
			assert.Contains(t, err.Error(), fmt.Sprintf("(%d records failed)", st.Failed), "the count is Stats.Failed")
			assert.Equal(t, err, h.Close(), "every Close returns the same error")
		})
	}
}

// TestRecordAfterCloseReportedOnce (issue 29 item 4): records logged after
// Close were counted in Stats and returned ErrClosed, which slog.Logger
// discards, so a shutdown-order mistake went unnoticed. The first is now
// reported to OnError, once for every handler of one NewHandler, whatever
// path the record takes; an OnError that logs through the closed handler
// does not report again.
func TestRecordAfterCloseReportedOnce(t *testing.T) {
	const goroutines, perGoroutine = 8, 50
	paths := []struct {
		name string
		log  func(h *Handler, i int) error
	}{
		{"Logger", func(h *Handler, i int) error {
			return h.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelError, "late", 0))
		}},
		{"derived handlers", func(h *Handler, i int) error {
			d := h.Named("db").WithAttrs([]slog.Attr{slog.Int("i", i)}).WithGroup("g")
			return d.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelError, "late", 0))
		}},
		{"handleAttrs (otelbridge)", func(h *Handler, i int) error {
			return h.handleAttrs(context.Background(), time.Now(), slog.LevelError, "late", []slog.Attr{slog.Int("i", i)})
		}},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			var out memSink
			reports := make(chan error, goroutines*perGoroutine)
			var h *Handler
			h = NewHandler(&out, &Options{OnError: func(err error) {
				reports <- err
				slog.New(h).Error("OnError logs through the closed handler")
			}})
			require.NoError(t, h.Close())

			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := range perGoroutine {
						assert.ErrorIs(t, p.log(h, g*perGoroutine+i), ErrClosed)
					}
				})
			}
			wg.Wait()
			select {
			case err := <-reports:
				require.ErrorIs(t, err, ErrClosed)
				assert.Equal(t, `asyncbus: handler closed: a record logged after Close was dropped (level ERROR, msg "late"); it and any later ones are counted in Stats.DroppedClosed, and only this first one is reported`, err.Error())
			case <-time.After(time.Minute): // a failure bound, not a synchronisation
				t.Fatal("the record after Close was never reported")
			}
			// The report is delivered on a goroutine of its own once the
			// reporter has finished: when none is left, every report made
			// has been delivered.
			goleak.VerifyNone(t)
			assert.Empty(t, reports, "one report in all")
			st := h.Stats()
			assert.EqualValues(t, goroutines*perGoroutine+1, st.DroppedClosed, "every record counted, OnError's own included")
			assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed)
			assert.Empty(t, out.Lines())
		})
	}
}

// A long message is cut in the report; the record is counted as any other.
func TestRecordAfterCloseReportCutsLongMessage(t *testing.T) {
	reports := make(chan error, 1)
	h := NewHandler(io.Discard, &Options{OnError: func(err error) { reports <- err }})
	require.NoError(t, h.Close())
	msg := strings.Repeat("é", maxClosedMsg) // two bytes each: the cut falls inside one
	require.ErrorIs(t, slog.New(h).Handler().Handle(context.Background(), slog.NewRecord(time.Time{}, slog.LevelInfo, msg, 0)), ErrClosed)
	err := <-reports
	quoted := strings.Repeat("é", maxClosedMsg/2) + "…"
	assert.Contains(t, err.Error(), fmt.Sprintf("(level INFO, msg %q)", quoted))
	assert.EqualValues(t, 1, h.Stats().DroppedClosed)
}

// keepDefaults restores slog's default logger and the log package's output
// and flags, which slog.SetDefault changes, when t ends.
func keepDefaults(t *testing.T) {
	logger, w, flags := slog.Default(), log.Writer(), log.Flags()
	t.Cleanup(func() {
		slog.SetDefault(logger)
		log.SetOutput(w)
		log.SetFlags(flags)
	})
}

// TestCloseDefault: CloseDefault closes the Handler behind slog.Default(),
// derived ones included, returns Close's error, and says what the default
// is when it is not an asyncbus Handler.
func TestCloseDefault(t *testing.T) {
	var out memSink
	tests := []struct {
		name    string
		handler func(h *Handler) slog.Handler // the default logger's handler, made from h
		wantErr string                        // "" when h is closed
	}{
		{"the handler", func(h *Handler) slog.Handler { return h }, ""},
		{"With and WithGroup", func(h *Handler) slog.Handler { return slog.New(h).With("app", "x").WithGroup("g").Handler() }, ""},
		{"Named", func(h *Handler) slog.Handler { return h.Named("db") }, ""},
		{"another handler", func(*Handler) slog.Handler { return slog.NewTextHandler(io.Discard, nil) },
			"asyncbus: CloseDefault: slog.Default()'s handler is a *slog.TextHandler, not an *asyncbus.Handler (not set with slog.SetDefault, or wrapped)"},
		{"a MultiHandler", func(h *Handler) slog.Handler { return slog.NewMultiHandler(h) },
			"asyncbus: CloseDefault: slog.Default()'s handler is a *slog.MultiHandler, not an *asyncbus.Handler (not set with slog.SetDefault, or wrapped)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keepDefaults(t)
			h := NewHandler(&out, nil)
			defer h.Close()
			slog.SetDefault(slog.New(tt.handler(h)))
			slog.Info("before")
			err := CloseDefault()
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				require.NoError(t, h.Flush(), "h is still open")
				return
			}
			require.NoError(t, err)
			require.ErrorIs(t, h.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelInfo, "after", 0)), ErrClosed, "h is closed")
			assert.EqualValues(t, 1, h.Stats().Written)
		})
	}

	t.Run("never set", func(t *testing.T) {
		err := CloseDefault() // the tests restore slog's own default
		require.ErrorContains(t, err, "slog.Default()'s handler is a *slog.defaultHandler, not an *asyncbus.Handler")
	})

	t.Run("Close's error", func(t *testing.T) {
		keepDefaults(t)
		h := NewHandler(nil, &Options{OnError: func(error) {}})
		slog.SetDefault(slog.New(h))
		slog.Info("lost")
		err := CloseDefault()
		require.ErrorIs(t, err, errNilWriter)
		assert.True(t, strings.HasSuffix(err.Error(), "(1 record failed)"), "%v", err)
	})
}
