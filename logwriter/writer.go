// Package logwriter puts the lines of other Go loggers (zap, zerolog,
// logrus, klog, the standard log) on the asyncbus bus: a Writer is an
// io.Writer each of them accepts as its output, without code changes, and
// gives their lines what an asyncbus Handler gives slog records: ordered,
// asynchronous writes that never stall on a slow output, accounting in
// Stats with drop markers at gaps, an optional durable ring, and exit
// safety for error and fatal lines.
//
//	w := logwriter.New(f, &logwriter.Options{Format: asyncbus.ZapJSON})
//	defer w.Close()
//	logger := zap.New(zapcore.NewCore(enc, zapcore.AddSync(w), zap.InfoLevel))
package logwriter

import (
	"context"
	"io"
	"log/slog"

	"github.com/asyncbus/asyncbus"
)

// Writer is an io.Writer that puts lines other loggers encoded (zap,
// zerolog, logrus, klog, the standard log) on a bus of its own, as an
// asyncbus.Handler does its records: each Write is one record, queued and
// written by the drainer in order, counted in Stats, with drop markers at
// gaps, and the Handler's bounded waits for the output. Its methods are safe for concurrent use.
//
// Each Write's bytes are copied, so the logger may reuse them at once, and
// written exactly as given: a line without a final newline gets none added,
// and none is removed (every supported logger ends its lines with one). An
// empty Write is not a record.
//
// Exit safety follows the line's level, which the Writer reads as each
// logger writes it: a JSON object's top-level "level" string wherever it
// is (zap, zerolog and logrus JSON, where sorted keys put it after a long
// "error"), or, in a line's first 256 bytes, a level= token (logrus text,
// logfmt, slog text), zap's console level field (coloured or not), or
// klog's severity letter. As a Handler's records, in Block
// mode without BlockTimeout (the default), lines at or above
// slog.LevelError (zap's dpanic and error) are in the output before Write
// returns, and lines at or above Options.SyncLevel (fatal and panic, by
// default) are written and synced, within the Handler's bounds. A line with no readable level counts as Info, except one written
// by the standard log's Fatal and Panic functions (log.Fatal, its f and ln
// forms, and the *log.Logger methods), which is fatal: log.Fatal's os.Exit
// keeps its line when the Writer is the log's output itself (log.SetOutput
// or log.New), not behind another writer. A plain log.Print before
// os.Exit is Info, and so is the goroutine dump klog writes after its
// fatal line: neither is waited for.
type Writer struct {
	h *asyncbus.Handler
}

// Options configures a Writer: the part of asyncbus.Options that applies
// to lines another logger already encoded. The zero value (or nil) means:
// JSON drop markers, Block, an 8 MiB ring, 20 ms maximum latency, fatal
// lines synced.
type Options struct {
	// Format is the stream's format, the format of the drop markers the
	// Writer writes at gaps: asyncbus.JSON (the zero value) for zerolog's
	// and logrus's JSON, asyncbus.ZapJSON for zap's JSON, asyncbus.Logfmt
	// or asyncbus.Text for logrus's text formatter, asyncbus.ZapConsole
	// for zap's console encoder, asyncbus.Text for klog and the standard
	// log. The zap formats write the marker's time as RFC 3339 unless told
	// otherwise: give the stream's time encoding with WithZapTime, e.g.
	// asyncbus.ZapJSON.WithZapTime(encode.ZapTimeEpoch) for
	// zap.NewProductionEncoderConfig's float "ts", so that the markers'
	// "ts" reads as the logger's own.
	Format asyncbus.Format
	// SyncLevel: lines at or above it are written and synced before Write
	// returns, as asyncbus.Options.SyncLevel. Nil means asyncbus.LevelFatal.
	SyncLevel slog.Leveler
	// OnError receives each failure once, as asyncbus.Options.OnError.
	OnError func(error)
	// Ring configures the ring, its overflow policy and the drainer, as
	// asyncbus.Options.Ring does (Ring.File: see Open).
	Ring asyncbus.RingOptions
	// Retry says how a failing output is retried, as
	// asyncbus.Options.Retry does.
	Retry asyncbus.RetryOptions
}

// handlerOptions is the configuration of the handler that carries o's
// lines.
func (o *Options) handlerOptions() *asyncbus.Options {
	if o == nil {
		return nil
	}
	return &asyncbus.Options{
		Format:    o.Format,
		SyncLevel: o.SyncLevel,
		OnError:   o.OnError,
		Ring:      o.Ring,
		Retry:     o.Retry,
		Encoding:  asyncbus.EncodingOptions{Color: asyncbus.ColorNever}, // a Console stream's markers: the loggers' own lines are plain
	}
}

// New returns a Writer writing to w, which may be anything
// asyncbus.NewHandler accepts (a filesink.File, an *os.File, any
// io.Writer). It never fails: invalid options and an unusable ring file
// are reported to OnError and replaced by their defaults, as
// asyncbus.NewHandler does.
func New(w io.Writer, opts *Options) *Writer {
	return &Writer{h: asyncbus.NewHandler(w, opts.handlerOptions())}
}

// Open is New for configurations that can fail, as asyncbus.Open is: it
// returns invalid options and ring-file errors, and with Options.Ring.File
// writes the lines an earlier process had accepted before it returns.
func Open(w io.Writer, opts *Options) (*Writer, error) {
	h, err := asyncbus.Open(w, opts.handlerOptions())
	if err != nil {
		return nil, err
	}
	return &Writer{h: h}, nil
}

// Write enqueues a copy of p as one record and returns len(p) and nil.
// Every outcome is counted in Stats and each failure reported once to
// OnError, not returned here: a line refused because the ring was full
// (Drop, or a BlockTimeout) is in Stats.Dropped and a drop marker, one
// refused after Close in Stats.DroppedClosed, one the output rejected in
// Stats.Failed. The loggers that call Write turn a returned error into a
// line on standard error for every record; with a full ring that would
// repeat per record what one marker says. Lines at or above
// slog.LevelError wait for their write, those at or above SyncLevel for
// their sync too (see Writer).
func (w *Writer) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	level, ok := lineLevel(p)
	if !ok {
		level = callerLevel()
	}
	_ = w.h.HandleEncoded(level, p) // counted and reported by the handler (see above)
	return len(p), nil
}

// Sync writes every line written before the call to the output and syncs
// it where the output has a Sync method (zap calls it after its Fatal and
// Panic lines; users call it at exit). klog.Flush does not reach the
// Writer (klog flushes its own buffers, not the output it was given), so
// a klog program calls w.Sync (or Close) itself before it exits. It waits
// as a Handler's SyncLevel record does: at most 5 s, and not at all while the output is stuck,
// returning an error matching context.DeadlineExceeded with the lines
// still queued. Otherwise it returns the output's error, as
// asyncbus.Handler.Flush does.
func (w *Writer) Sync() error { return w.h.Sync() }

// Close writes every line queued, syncs the output and stops the Writer,
// as asyncbus.Handler.Close does (and returns the same verdict); later
// Writes are counted in Stats.DroppedClosed and the first is reported to
// OnError. It does not close the output.
func (w *Writer) Close() error { return w.h.Close() }

// CloseContext is Close bounded by ctx, as asyncbus.Handler.CloseContext.
func (w *Writer) CloseContext(ctx context.Context) error { return w.h.CloseContext(ctx) }

// Stats returns the Writer's counters; after Sync or Close, with no Write
// running, Enqueued == Written + Dropped + Failed. The per-level counts
// (LoggedInfo and the others) count lines by the level read from them.
func (w *Writer) Stats() asyncbus.Stats { return w.h.Stats() }
