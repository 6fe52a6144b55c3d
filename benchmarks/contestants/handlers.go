package contestants

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	plog "github.com/phuslu/log"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/diode"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

// closing adds a Close method (called once, by the harness after the idle
// window or on an error path) to a handler that has none of its own.
type closing struct {
	slog.Handler
	once  sync.Once
	close func() error
	err   error
}

// Close releases what the contestant holds (goroutines, files); it is safe
// to call more than once.
func (c *closing) Close() error {
	c.once.Do(func() { c.err = c.close() })
	return c.err
}

// --- asyncbus ---

func newAsyncbus(drop bool) func(f *os.File) (slog.Handler, func() error, error) {
	return func(f *os.File) (slog.Handler, func() error, error) {
		o := asyncbus.Block
		if drop {
			o = asyncbus.Drop
		}
		// Defaults otherwise (8 MiB ring, 20 ms max latency): what a user gets.
		h := asyncbus.NewHandler(f, &asyncbus.Options{Format: asyncbus.JSON, Ring: asyncbus.RingOptions{Overflow: o}, Encoding: asyncbus.EncodingOptions{Color: asyncbus.ColorNever}})
		return h, h.Flush, nil // the harness calls h.Close after the idle window
	}
}

// newAsyncbusDurable is asyncbus-block with the durable ring: the ring lives
// in a file beside the log (removed with the run's temporary directory).
func newAsyncbusDurable(f *os.File) (slog.Handler, func() error, error) {
	h, err := asyncbus.Open(f, &asyncbus.Options{Format: asyncbus.JSON, Encoding: asyncbus.EncodingOptions{Color: asyncbus.ColorNever},
		Ring: asyncbus.RingOptions{File: f.Name() + ".ring"}})
	if err != nil {
		return nil, nil, err
	}
	return h, h.Flush, nil
}

// --- the standard library ---

func newSlogFile(f *os.File) (slog.Handler, func() error, error) {
	return slog.NewJSONHandler(f, nil), nil, nil
}

func newSlogBufio(f *os.File) (slog.Handler, func() error, error) {
	lw := harness.NewLockedBufio(f, BufioSize)
	return slog.NewJSONHandler(lw, nil), lw.Flush, nil
}

// --- the seeds' baselines: encode on the caller into a buffer, then emit ---

// maxPooledBuf bounds the encode buffers kept in a pool, so that one huge
// record does not pin its buffer for ever.
const maxPooledBuf = 64 << 10

// encState is one pooled encoder: a buffer and a slog.JSONHandler (with the
// handler's WithAttrs/WithGroup calls replayed) that writes into it.
type encState struct {
	buf bytes.Buffer
	h   slog.Handler
}

// bufEncoder encodes records with slog's JSON encoder into pooled buffers,
// outside any shared lock. Its ops replay WithAttrs/WithGroup on each pooled
// JSONHandler, so derived handlers encode exactly as slog's would.
type bufEncoder struct {
	ops  []func(slog.Handler) slog.Handler
	pool sync.Pool
}

func newBufEncoder(ops []func(slog.Handler) slog.Handler) *bufEncoder {
	e := &bufEncoder{ops: ops}
	e.pool.New = func() any {
		s := &encState{}
		var h slog.Handler = slog.NewJSONHandler(&s.buf, nil)
		for _, op := range e.ops {
			h = op(h)
		}
		s.h = h
		return s
	}
	return e
}

func (e *bufEncoder) with(op func(slog.Handler) slog.Handler) *bufEncoder {
	ops := append(append(make([]func(slog.Handler) slog.Handler, 0, len(e.ops)+1), e.ops...), op)
	return newBufEncoder(ops)
}

// encode encodes r and passes the line to emit, which must not keep it.
func (e *bufEncoder) encode(ctx context.Context, r slog.Record, emit func([]byte) error) error {
	s := e.pool.Get().(*encState)
	s.buf.Reset()
	err := s.h.Handle(ctx, r)
	if err == nil {
		err = emit(s.buf.Bytes())
	}
	if s.buf.Cap() <= maxPooledBuf {
		e.pool.Put(s)
	}
	return err
}

// emitHandler is a slog.Handler that encodes like slog.JSONHandler (at
// Info and above) and hands each line to emit.
type emitHandler struct {
	enc  *bufEncoder
	emit func([]byte) error
}

func (h *emitHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *emitHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.enc.encode(ctx, r, h.emit)
}

// WithAttrs and WithGroup delegate every call, empty ones included, so that
// the output stays byte for byte slog.JSONHandler's.
func (h *emitHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &emitHandler{enc: h.enc.with(func(x slog.Handler) slog.Handler { return x.WithAttrs(as) }), emit: h.emit}
}

func (h *emitHandler) WithGroup(name string) slog.Handler {
	return &emitHandler{enc: h.enc.with(func(x slog.Handler) slog.Handler { return x.WithGroup(name) }), emit: h.emit}
}

// newMutexWrite is the "traditional" synchronous logger of the seeds:
// format on the caller, then lock and write(2) the one record.
func newMutexWrite(f *os.File) (slog.Handler, func() error, error) {
	var mu sync.Mutex
	emit := func(p []byte) error {
		mu.Lock()
		defer mu.Unlock()
		_, err := f.Write(p)
		return err
	}
	return &emitHandler{enc: newBufEncoder(nil), emit: emit}, nil, nil
}

// lawWriter is seed 003's LAW asynchronous writer: Write copies the line
// into a pooled buffer and sends it over a buffered channel; one goroutine
// writes the lines through a bufio.Writer and flushes it when it falls idle
// (LAW's heartbeat). Unlike LAW, whose Write fails with "queue is full"
// (and slog.Logger would drop that record silently), this one blocks when
// the channel is full, so that it loses nothing and competes as a lossless
// peer.
type lawWriter struct {
	ch    chan lawItem
	pool  sync.Pool
	done  chan struct{}
	werr  error // first write error, read after done is closed
	close sync.Once
}

// lawItem is a line to write, or (ack != nil) a flush request.
type lawItem struct {
	b   *[]byte
	ack chan error
}

// lawHeartbeat is how often the LAW writer flushes a buffer that has seen
// no new line since the previous beat (LAW: a 1 s heartbeat).
const lawHeartbeat = time.Second

func newLAWWriter(w io.Writer) *lawWriter {
	lw := &lawWriter{ch: make(chan lawItem, LAWQueue), done: make(chan struct{})}
	lw.pool.New = func() any { b := make([]byte, 0, 512); return &b }
	go lw.loop(bufio.NewWriterSize(w, BufioSize))
	return lw
}

func (lw *lawWriter) loop(bw *bufio.Writer) {
	defer close(lw.done)
	tick := time.NewTicker(lawHeartbeat)
	defer tick.Stop()
	idle := true
	for {
		select {
		case it, ok := <-lw.ch:
			if !ok {
				if err := bw.Flush(); err != nil && lw.werr == nil {
					lw.werr = err
				}
				return
			}
			if it.ack != nil {
				it.ack <- bw.Flush()
				continue
			}
			if _, err := bw.Write(*it.b); err != nil && lw.werr == nil {
				lw.werr = err
			}
			if cap(*it.b) <= maxPooledBuf {
				lw.pool.Put(it.b)
			}
			idle = false
		case <-tick.C:
			if idle && bw.Buffered() > 0 {
				if err := bw.Flush(); err != nil && lw.werr == nil {
					lw.werr = err
				}
			}
			idle = true
		}
	}
}

// Write copies p and queues it, blocking while the channel is full.
func (lw *lawWriter) Write(p []byte) (int, error) {
	b := lw.pool.Get().(*[]byte)
	*b = append((*b)[:0], p...)
	lw.ch <- lawItem{b: b}
	return len(p), nil
}

// Flush returns once every line queued before it is written to the file.
func (lw *lawWriter) Flush() error {
	ack := make(chan error, 1)
	lw.ch <- lawItem{ack: ack}
	return <-ack
}

// Close flushes and stops the writer goroutine; no Write may follow.
func (lw *lawWriter) Close() error {
	lw.close.Do(func() { close(lw.ch) })
	<-lw.done
	return lw.werr
}

func newLAW(f *os.File) (slog.Handler, func() error, error) {
	lw := newLAWWriter(f)
	emit := func(p []byte) error { _, err := lw.Write(p); return err }
	return &closing{Handler: &emitHandler{enc: newBufEncoder(nil), emit: emit}, close: lw.Close}, lw.Flush, nil
}

// --- zap ---

func newZap(f *os.File) (slog.Handler, func() error, error) {
	// BufferedWriteSyncer defaults: 256 KiB buffer, flushed every 30 s.
	ws := &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(f)}
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), ws, zapcore.InfoLevel)
	// ws.Sync flushes the buffer and fsyncs the file.
	return &closing{Handler: zapslog.NewHandler(core), close: ws.Stop}, ws.Sync, nil
}

// --- zerolog ---

// DiodeStats is what zerolog-diode's handler reports through its Stats
// method: the records its diode says it dropped. It is reported next to the
// file's count, never trusted instead of it (a diode "collision" also skips
// a slot that the reader then counts as missed).
type DiodeStats struct {
	Missed uint64 // sum of the counts passed to the diode's alert func
}

// zerologHandler is zerolog's slog handler plus the diode's Close and
// alert count.
type zerologHandler struct {
	closing
	missed *atomic.Uint64
}

// Stats returns the diode's reported losses.
func (h *zerologHandler) Stats() DiodeStats { return DiodeStats{Missed: h.missed.Load()} }

// writeOnly hides the file's Close from diode.Writer.Close, which closes
// the writer it wraps when it can: the harness owns the file.
type writeOnly struct{ w io.Writer }

func (w writeOnly) Write(p []byte) (int, error) { return w.w.Write(p) }

func newZerolog(f *os.File) (slog.Handler, func() error, error) {
	missed := new(atomic.Uint64)
	dw := diode.NewWriter(writeOnly{f}, DiodeSize, DiodePoll, func(n int) {
		if n > 0 {
			missed.Add(uint64(n))
		}
	})
	zl := zerolog.New(dw).Level(zerolog.InfoLevel)
	h := &zerologHandler{missed: missed}
	h.Handler = zerolog.NewSlogHandler(zl)
	h.close = dw.Close
	// The diode has no flush: Close drains what the reader can still reach
	// and stops its goroutine, so the flush closes it (a second Close, by
	// the harness, is a no-op).
	return h, h.Close, nil
}

// --- phuslu/log ---

// phusluMaxBackups keeps FileWriter from pruning files in its directory.
const phusluMaxBackups = 1 << 20

// newPhuslu builds phuslu's slog handler (Logger.Slog) on an AsyncWriter
// over a FileWriter, the only writer it drains with writev(2). FileWriter
// opens its own file, named after Filename plus a timestamp, so it writes
// into a private directory next to the harness's file; the flush closes the
// AsyncWriter (its only way to flush), renames the file over the harness's
// one and fsyncs it.
func newPhuslu(f *os.File) (slog.Handler, func() error, error) {
	dir, err := os.MkdirTemp(filepath.Dir(f.Name()), "phuslu-")
	if err != nil {
		return nil, nil, err
	}
	fw := &plog.FileWriter{
		Filename:   filepath.Join(dir, "phuslu.log"),
		ProcessID:  true, // no symlink at Filename
		MaxBackups: phusluMaxBackups,
	}
	aw := &plog.AsyncWriter{Writer: fw, ChannelSize: PhusluChannelSize}
	logger := &plog.Logger{Level: plog.InfoLevel, Writer: aw}
	var closeOnce sync.Once
	var closeErr error
	closeAW := func() error {
		closeOnce.Do(func() { closeErr = aw.Close() })
		return closeErr
	}
	flush := func() error {
		if err := closeAW(); err != nil {
			return err
		}
		return adoptFile(dir, f.Name())
	}
	h := &closing{Handler: logger.Slog().Handler(), close: func() error {
		err := closeAW()
		return errors.Join(err, os.RemoveAll(dir))
	}}
	return h, flush, nil
}

// adoptFile renames the one non-empty file in dir to dst and fsyncs it.
func adoptFile(dir, dst string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var src string
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || info.Size() == 0 {
			continue
		}
		if src != "" {
			return fmt.Errorf("phuslu FileWriter wrote more than one file in %s", dir)
		}
		src = filepath.Join(dir, e.Name())
	}
	if src == "" {
		return nil // nothing written: the harness finds an empty file
	}
	if err := os.Rename(src, dst); err != nil {
		return err
	}
	g, err := os.Open(dst)
	if err != nil {
		return err
	}
	err = g.Sync()
	return errors.Join(err, g.Close())
}
