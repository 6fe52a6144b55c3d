package integration

import (
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2/test"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/logrbridge"
)

// klogConfig returns klog's OutputConfig for a backend; cleanup releases
// every logger the suite created.
func klogConfig(k logrKind, asBackend bool) (test.OutputConfig, func()) {
	var mu sync.Mutex
	var closers []func()
	cfg := test.OutputConfig{
		NewLogger: func(out io.Writer, v int, _ string) logr.Logger {
			l, closeFn := k.newLogger(out, slog.Level(-v))
			mu.Lock()
			closers = append(closers, closeFn)
			mu.Unlock()
			return l
		},
		AsBackend:             asBackend,
		ExpectedOutputMapping: klogMapping(asBackend),
	}
	return cfg, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range closers {
			c()
		}
	}
}

func TestKlogOutput(t *testing.T) {
	for _, k := range logrKinds {
		for _, asBackend := range []bool{false, true} {
			name := k.name + "/direct"
			if asBackend {
				name = k.name + "/AsBackend"
			}
			t.Run(name, func(t *testing.T) {
				test.InitKlog(t)
				cfg, cleanup := klogConfig(k, asBackend)
				defer cleanup()
				test.Output(t, cfg)
			})
		}
	}
}

func BenchmarkKlogOutput(b *testing.B) {
	b.Run("klog", func(b *testing.B) {
		test.InitKlog(b)
		test.Benchmark(b, test.OutputConfig{})
	})
	// The conformance kinds write every record synchronously; the
	// benchmark adds asyncbus as deployed (asynchronous, default SyncLevel).
	kinds := append(logrKinds[:len(logrKinds):len(logrKinds)], logrKind{
		name: "asyncbus-async",
		newLogger: func(w io.Writer, level slog.Level, opts ...logrbridge.Option) (logr.Logger, func()) {
			h := asyncbus.NewHandler(w, &asyncbus.Options{Level: level, AddSource: true, ReplaceAttr: logrCaller})
			return logrbridge.NewLogger(h, opts...), func() { _ = h.Close() }
		},
	})
	for _, k := range kinds {
		for _, asBackend := range []bool{false, true} {
			name := k.name + "/direct"
			if asBackend {
				name = k.name + "/AsBackend"
			}
			b.Run(name, func(b *testing.B) {
				test.InitKlog(b)
				cfg, cleanup := klogConfig(k, asBackend)
				defer cleanup()
				test.Benchmark(b, cfg)
			})
		}
	}
}
