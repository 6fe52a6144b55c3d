package benchmarks

import (
	"errors"
	"io"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/logrbridge"
)

// logrBackend builds a logr.Logger writing JSON at Info to io.Discard.
type logrBackend struct {
	name string
	new  func(b *testing.B) logr.Logger
}

func zaprLogger(caller bool) func(b *testing.B) logr.Logger {
	return func(*testing.B) logr.Logger {
		core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
		var opts []zap.Option
		if caller {
			opts = append(opts, zap.AddCaller())
		}
		return zapr.NewLogger(zap.New(core, opts...))
	}
}

func asyncbusLogger(caller bool) func(b *testing.B) logr.Logger {
	return func(b *testing.B) logr.Logger {
		h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{AddSource: caller})
		b.Cleanup(func() { _ = h.Close() })
		return logrbridge.NewLogger(h, logrbridge.RecordCaller(caller))
	}
}

// The same messages for every backend: controller-runtime-like Info with
// four key/values, a disabled V(1), WithValues on the hot path, and Error.
var logrBackends = []logrBackend{
	{"zapr", zaprLogger(false)},
	{"asyncbus", asyncbusLogger(false)},
	{"zapr+caller", zaprLogger(true)},
	{"asyncbus+caller", asyncbusLogger(true)},
}

var errLogrBench = errors.New("connection refused")

func BenchmarkLogr(b *testing.B) {
	kv := []any{"controller", "pods", "namespace", "shop", "name", "web-1", "attempt", 3}
	for _, be := range logrBackends {
		b.Run("Info4KV/"+be.name, func(b *testing.B) {
			l := be.new(b)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					l.Info("Reconciling object", "controller", "pods", "namespace", "shop", "name", "web-1", "attempt", 3)
				}
			})
		})
		b.Run("DisabledV/"+be.name, func(b *testing.B) {
			l := be.new(b)
			b.ReportAllocs()
			for b.Loop() {
				l.V(1).Info("Reconciling object", kv...)
			}
		})
		b.Run("WithValues/"+be.name, func(b *testing.B) {
			l := be.new(b)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					l.WithValues("reconcileID", "6f1d2c", "controller", "pods").Info("Reconcile successful", "attempt", 3)
				}
			})
		})
		b.Run("Error/"+be.name, func(b *testing.B) {
			l := be.new(b)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					l.Error(errLogrBench, "Reconciler error", "name", "web-1", "namespace", "shop")
				}
			})
		})
	}
}
