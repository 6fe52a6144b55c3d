package main

import (
	"context"
	"io"
	"log"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/diode"
	"github.com/sirupsen/logrus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/logwriter"
)

// contestant is one logger on one output: setup returns the call that
// logs record seq and the finish that returns once every line is in the
// output (the caller then fsyncs the file), with how many lines the
// output's own counters say it lost (-1: it keeps none).
type contestant struct {
	name  string
	setup func(out io.Writer) (logFn func(seq int), finish func() (lost int64, err error))
}

// The reference record's fields (the benchmarks' access-log line).
const (
	message   = "request handled"
	method    = "GET"
	path      = "/api/v1/users/12345/orders"
	status    = 200
	latency   = 1500 * time.Microsecond
	byteCount = 5120
)

func zapLogger(ws zapcore.WriteSyncer) *zap.Logger {
	return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), ws, zap.InfoLevel))
}

func zapLog(l *zap.Logger) func(int) {
	return func(seq int) {
		l.Info(message, zap.String("method", method), zap.String("path", path), zap.Int("status", status),
			zap.Duration("latency", latency), zap.Int64("bytes", byteCount), zap.Bool("cache_hit", true), zap.Int("seq", seq))
	}
}

func zerologLog(l zerolog.Logger) func(int) {
	return func(seq int) {
		l.Info().Str("method", method).Str("path", path).Int("status", status).Dur("latency", latency).
			Int64("bytes", byteCount).Bool("cache_hit", true).Int("seq", seq).Msg(message)
	}
}

func logrusLog(l *logrus.Logger) func(int) {
	return func(seq int) {
		l.WithFields(logrus.Fields{"method": method, "path": path, "status": status, "latency": latency,
			"bytes": byteCount, "cache_hit": true, "seq": seq}).Info(message)
	}
}

func stdlogLog(l *log.Logger) func(int) {
	return func(seq int) {
		l.Printf("%s method=%s path=%s status=%d latency=%v bytes=%d cache_hit=%t seq=%d", message, method, path, status, latency, byteCount, true, seq)
	}
}

// writerFinish closes w and returns its losses (dropped and failed lines).
func writerFinish(w *logwriter.Writer) func() (int64, error) {
	return func() (int64, error) {
		err := w.Close()
		st := w.Stats()
		return int64(st.Dropped + st.Failed), err
	}
}

func noLoss(err error) (int64, error) { return -1, err }

// contestants lists every logger on its own output and through a
// logwriter.Writer; out is the file, or io.Discard for the share rows.
func contestants() []contestant {
	return []contestant{
		{"zap-file", func(out io.Writer) (func(int), func() (int64, error)) {
			l := zapLogger(zapcore.Lock(zapcore.AddSync(out)))
			return zapLog(l), func() (int64, error) { return noLoss(nil) }
		}},
		{"zap-buffered", func(out io.Writer) (func(int), func() (int64, error)) {
			// BufferedWriteSyncer's defaults: 256 KiB, flushed every 30 s.
			ws := &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(out)}
			return zapLog(zapLogger(ws)), func() (int64, error) { return noLoss(ws.Stop()) }
		}},
		{"zap-logwriter", func(out io.Writer) (func(int), func() (int64, error)) {
			w := logwriter.New(out, &logwriter.Options{Format: asyncbus.ZapJSON})
			return zapLog(zapLogger(zapcore.AddSync(w))), writerFinish(w)
		}},
		{"zerolog-file", func(out io.Writer) (func(int), func() (int64, error)) {
			return zerologLog(zerolog.New(out).With().Timestamp().Logger()), func() (int64, error) { return noLoss(nil) }
		}},
		{"zerolog-diode", func(out io.Writer) (func(int), func() (int64, error)) {
			var lost atomic.Int64
			// zerolog's README values: 1000 slots, 10 ms poll.
			// struct{ io.Writer }: the diode's Close would close the file.
			d := diode.NewWriter(struct{ io.Writer }{out}, 1000, 10*time.Millisecond, func(missed int) { lost.Add(int64(missed)) })
			return zerologLog(zerolog.New(d).With().Timestamp().Logger()), func() (int64, error) {
				err := d.Close()
				return lost.Load(), err
			}
		}},
		{"zerolog-logwriter", func(out io.Writer) (func(int), func() (int64, error)) {
			w := logwriter.New(out, nil)
			return zerologLog(zerolog.New(w).With().Timestamp().Logger()), writerFinish(w)
		}},
		{"logrus-file", func(out io.Writer) (func(int), func() (int64, error)) {
			l := logrus.New()
			l.SetOutput(out)
			l.SetFormatter(&logrus.JSONFormatter{})
			return logrusLog(l), func() (int64, error) { return noLoss(nil) }
		}},
		{"logrus-logwriter", func(out io.Writer) (func(int), func() (int64, error)) {
			w := logwriter.New(out, nil)
			l := logrus.New()
			l.SetOutput(w)
			l.SetFormatter(&logrus.JSONFormatter{})
			return logrusLog(l), writerFinish(w)
		}},
		{"stdlog-file", func(out io.Writer) (func(int), func() (int64, error)) {
			return stdlogLog(log.New(out, "", log.LstdFlags|log.Lmicroseconds)), func() (int64, error) { return noLoss(nil) }
		}},
		{"stdlog-logwriter", func(out io.Writer) (func(int), func() (int64, error)) {
			w := logwriter.New(out, &logwriter.Options{Format: asyncbus.Text})
			return stdlogLog(log.New(w, "", log.LstdFlags|log.Lmicroseconds)), writerFinish(w)
		}},
		{"slog-asyncbus", func(out io.Writer) (func(int), func() (int64, error)) {
			h := asyncbus.NewHandler(out, nil)
			l := slog.New(h)
			return slogLog(l), func() (int64, error) {
				err := h.Close()
				st := h.Stats()
				return int64(st.Dropped + st.Failed), err
			}
		}},
	}
}

func slogLog(l *slog.Logger) func(int) {
	return func(seq int) {
		l.LogAttrs(context.Background(), slog.LevelInfo, message, slog.String("method", method), slog.String("path", path),
			slog.Int("status", status), slog.Duration("latency", latency), slog.Int64("bytes", byteCount),
			slog.Bool("cache_hit", true), slog.Int("seq", seq))
	}
}

// shareContestants are the rows of the cost-per-record comparison: each
// logger into io.Discard (its own floor), and the handler's floor.
func shareContestants() []contestant {
	return []contestant{
		{"zap-discard", func(out io.Writer) (func(int), func() (int64, error)) {
			return zapLog(zapLogger(zapcore.AddSync(io.Discard))), func() (int64, error) { return noLoss(nil) }
		}},
		{"zerolog-discard", func(out io.Writer) (func(int), func() (int64, error)) {
			return zerologLog(zerolog.New(io.Discard).With().Timestamp().Logger()), func() (int64, error) { return noLoss(nil) }
		}},
		{"slog-noop", func(out io.Writer) (func(int), func() (int64, error)) {
			return slogLog(slog.New(discardHandler{})), func() (int64, error) { return noLoss(nil) }
		}},
	}
}

// discardHandler is the slog floor: slog.Logger's own front end.
type discardHandler struct{}

func (discardHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (discardHandler) Handle(context.Context, slog.Record) error    { return nil }
func (d discardHandler) WithAttrs([]slog.Attr) slog.Handler         { return d }
func (d discardHandler) WithGroup(string) slog.Handler              { return d }
