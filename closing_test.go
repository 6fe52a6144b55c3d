package asyncbus

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestCloseReportsEveryFailure: after Flush returned the
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
		{"output recovered", func() io.Writer { return &outageWriter{failures: math.MaxInt} }, 3, 2, errOutage, ": output unavailable (3 records failed)"},
		{"nothing failed", func() io.Writer { return &outageWriter{} }, 0, 3, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			out := tt.out()
			h := NewHandler(out, &Options{
				Retry: RetryOptions{MaxBackoff: time.Millisecond}, // the default four attempts, 1 ms apart
				// The records go as one batch at Flush.
				Ring:    RingOptions{MaxLatency: time.Hour, Overflow: Drop},
				OnError: func(error) {},
			})
			l := slog.New(h)
			for i := range tt.failing {
				l.Info("during the outage", "i", i)
			}
			flushErr := h.Flush()
			if tt.failing > 0 {
				require.ErrorIs(t, flushErr, tt.want, "Flush reports the failure first")
			}
			if w, ok := out.(*outageWriter); ok {
				w.end() // however the drainer batched them, every record before the Flush failed
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

// TestRecordAfterCloseReportedOnce: records logged after
// Close were counted in Stats and returned ErrClosed, which slog.Logger
// discards, so a shutdown-order mistake went unnoticed. The first is now
// reported to OnError before its Handle returns, once for every handler of
// one NewHandler, whatever path the record takes; an OnError that logs
// through the closed handler does not report again.
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
			// The report is delivered before the Handle that
			// made it returns (it was lost when the program ended right
			// after), so it is here without waiting.
			require.Len(t, reports, 1, "one report in all, delivered before Handle returned")
			err := <-reports
			require.ErrorIs(t, err, ErrClosed)
			assert.Equal(t, `asyncbus: handler closed: a record logged after Close was dropped (level ERROR, msg "late"); it and any later ones are counted in Stats.DroppedClosed, and only this first one is reported`, err.Error())
			goleak.VerifyNone(t)
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
	require.Len(t, reports, 1, "delivered before Handle returned")
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
			var reports reportLog
			h := NewHandler(&out, &Options{OnError: reports.onError})
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
			reports.requireClosedReport(t, "after")
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

// hungOutput's Write blocks until release is closed; each call first
// signals entered (buffered, without waiting). It keeps what it was given.
type hungOutput struct {
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	got     []byte
}

func (w *hungOutput) Write(p []byte) (int, error) {
	select {
	case w.entered <- struct{}{}:
	default:
	}
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, p...)
	return len(p), nil
}

// out is what w was given.
func out(w *hungOutput) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.got)
}

// noTime drops the time from records, so that their size is known.
func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// TestCloseIsBounded: "every wait is bounded", yet Close on a
// hung output never returned, so a deferred CloseDefault could hang a
// process at exit. Close now gives up after 5 s (CloseContext at its
// context's end): the error says the output hung and how many records and
// bytes were not written, and Stats counts them as failed, not written.
func TestCloseIsBounded(t *testing.T) {
	tests := []struct {
		name  string
		close func(h *Handler) error
		bound time.Duration
	}{
		{"Close", (*Handler).Close, defaultCloseTimeout},
		{"CloseContext", func(h *Handler) error {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			return h.CloseContext(ctx)
		}, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &hungOutput{entered: make(chan struct{}, 1), release: make(chan struct{})}
			defer goleak.VerifyNone(t)
			defer close(w.release)
			// BlockTimeout: the drainer writes every record, so the
			// callers are never the ones in the hung call.
			h := NewHandler(w, &Options{Ring: RingOptions{BlockTimeout: time.Hour}, ReplaceAttr: noTime, OnError: func(error) {}})
			log := slog.New(h)
			var size int
			for i := range 15 {
				log.Info("r", "i", i)
				size += len(fmt.Sprintf(`{"level":"INFO","msg":"r","i":%d}`+"\n", i))
				if i == 0 {
					<-w.entered // the first is in the output's hands, the others queue
				}
			}
			start := time.Now()
			err := tt.close(h)
			took := time.Since(start)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.GreaterOrEqual(t, took, tt.bound)
			assert.Less(t, took, tt.bound+5*time.Second, "a failure bound, not a measurement")
			assert.Regexp(t, `^asyncbus: close \*asyncbus.hungOutput: gave up when Close's context ended \(context deadline exceeded\): the output hung: a call into it had not returned after [0-9.]+m?s; 15 records \(`+fmt.Sprint(size)+` bytes\) not written, counted as failed$`, err.Error())
			st := h.Stats()
			assert.EqualValues(t, 15, st.Failed)
			assert.Zero(t, st.Written)
			assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed)
			assert.Equal(t, err, h.Close(), "every Close returns the same error")
		})
	}
}

// slowOutput takes delay for each call, then keeps the bytes.
type slowOutput struct {
	delay time.Duration
	memSink
}

func (w *slowOutput) Write(p []byte) (int, error) {
	time.Sleep(w.delay) // the output's slowness, not a synchronisation
	return w.memSink.Write(p)
}

// selfLoggingOutput logs through its own handler from each Write.
type selfLoggingOutput struct {
	h atomic.Pointer[Handler]
	memSink
}

func (w *selfLoggingOutput) Write(p []byte) (int, error) {
	if h := w.h.Load(); h != nil {
		slog.New(h).Info("from the writer")
	}
	return w.memSink.Write(p)
}

// TestCloseWithSlowAndReentrantOutputs: the bound costs a slow output
// nothing (Close waits for it and returns nil), and an output that logs
// through its own handler while Close drains it neither deadlocks nor
// loses the report of its records refused after Close.
func TestCloseWithSlowAndReentrantOutputs(t *testing.T) {
	t.Run("slow", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		w := &slowOutput{delay: 300 * time.Millisecond}
		h := NewHandler(w, &Options{Ring: RingOptions{BlockTimeout: time.Hour}, OnError: func(error) {}})
		for i := range 10 {
			slog.New(h).Info("r", "i", i)
		}
		require.NoError(t, h.Close())
		assert.Len(t, w.Lines(), 10)
		assert.EqualValues(t, 10, h.Stats().Written)
	})
	t.Run("re-entrant", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		w := &selfLoggingOutput{}
		var mu sync.Mutex
		var reports []error
		h := NewHandler(w, &Options{OnError: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, err)
		}})
		w.h.Store(h)
		for i := range 10 {
			slog.New(h).Info("r", "i", i)
		}
		require.NoError(t, h.Close())
		st := h.Stats()
		assert.Zero(t, st.Failed)
		assert.Equal(t, st.Enqueued, st.Written+st.Dropped)
		assert.GreaterOrEqual(t, st.DroppedClosed, uint64(1), "the writer's records after Close are refused")
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, reports, 1)
		assert.ErrorContains(t, reports[0], `a record logged after Close was dropped (level INFO, msg "from the writer")`)
	})
}

// reportLog keeps the reports given to its OnError.
type reportLog struct {
	mu   sync.Mutex
	errs []error
}

func (r *reportLog) onError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

// requireClosedReport checks that the one report made is that of a record
// logged after Close with message msg: delivered before Handle returned.
func (r *reportLog) requireClosedReport(t *testing.T, msg string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Len(t, r.errs, 1, "the report of a record after Close")
	require.ErrorIs(t, r.errs[0], ErrClosed)
	assert.Contains(t, r.errs[0].Error(), "a record logged after Close was dropped (level ")
	assert.Contains(t, r.errs[0].Error(), fmt.Sprintf(", msg %q)", msg))
}

// TestFlushIsBounded: Flush, which logrbridge.Flush calls to end
// a logr program, waited for a hung output for ever. It now returns after
// 5 s (as Close) with an error saying so, the records still queued; a
// FlushContext with a deadline keeps the context's own error.
func TestFlushIsBounded(t *testing.T) {
	w := &hungOutput{entered: make(chan struct{}, 1), release: make(chan struct{})}
	defer goleak.VerifyNone(t)
	defer close(w.release)
	h := NewHandler(w, &Options{Ring: RingOptions{BlockTimeout: time.Hour}, OnError: func(error) {}})
	slog.New(h).Info("in the output's hands")
	<-w.entered
	slog.New(h).Info("queued")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.Equal(t, context.DeadlineExceeded, h.FlushContext(ctx))

	start := time.Now()
	err := h.Flush()
	took := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, "asyncbus: flush *asyncbus.hungOutput: the output did not take the records within 5s; they stay queued: context deadline exceeded", err.Error())
	assert.GreaterOrEqual(t, took, defaultCloseTimeout)
	assert.Less(t, took, defaultCloseTimeout+5*time.Second, "a failure bound, not a measurement")
	st := h.Stats()
	assert.Zero(t, st.Failed, "still queued")
	assert.Zero(t, st.Written)
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, h.CloseContext(ctx), context.DeadlineExceeded)
}

// TestCloseBoundedByAHungOnError: Close waits for the reports to be
// delivered, within the same bound: an OnError that does not return makes
// Close return at its context's end, saying so, with the run's verdict.
func TestCloseBoundedByAHungOnError(t *testing.T) {
	defer goleak.VerifyNone(t)
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	h := NewHandler(&outageWriter{failures: math.MaxInt}, &Options{
		Ring:  RingOptions{BlockTimeout: time.Hour}, // the drainer writes, and fails, the record
		Retry: RetryOptions{MaxBackoff: time.Millisecond},
		OnError: func(error) {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release
		},
	})
	slog.New(h).Info("lost")
	<-entered // the failure's report: OnError now hangs
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := h.CloseContext(ctx)
	close(release)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, errOutage, "the run's verdict too")
	assert.Equal(t, "asyncbus: close: OnError had not returned when Close's context ended (context deadline exceeded); reports may be undelivered; asyncbus: write *asyncbus.outageWriter: output unavailable (1 record failed)", err.Error())
}

func TestHandleAfterCloseReturnsErrClosed(t *testing.T) {
	var sink memSink
	var reports reportLog
	h := NewHandler(&sink, &Options{OnError: reports.onError})
	child := h.WithAttrs([]slog.Attr{slog.Int("k", 1)})
	require.NoError(t, slog.New(h).Handler().Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelInfo, "before", 0)))

	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, h.Close(), "Close is idempotent and safe from several goroutines")
		}()
	}
	wg.Wait()

	err := child.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelInfo, "after", 0))
	require.ErrorIs(t, err, ErrClosed)
	reports.requireClosedReport(t, "after")
	st := h.Stats()
	assert.EqualValues(t, 1, st.Written)
	assert.EqualValues(t, 1, st.DroppedClosed)
	assert.EqualValues(t, 1, st.Dropped)
	assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed)
	assert.Len(t, sink.Lines(), 1)
}
