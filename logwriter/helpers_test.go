package logwriter

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/asyncbus/asyncbus/internal/syncbuf"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// memSink is a goroutine-safe in-memory output with a Sync method, so the
// writer treats it as an output that can sync.
type memSink struct {
	syncbuf.Buffer
}

func (s *memSink) Sync() error { return nil }

func (s *memSink) Lines() []string {
	out := strings.TrimSuffix(s.String(), "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// gateSink blocks every write until gate is closed, to fill the ring.
type gateSink struct {
	memSink
	gate chan struct{}
}

func (g *gateSink) Write(p []byte) (int, error) {
	<-g.gate
	return g.memSink.Write(p)
}

var errOutput = errors.New("output broken")

// brokenOutput fails every write while broken is set.
type brokenOutput struct {
	broken atomic.Bool // atomic: the test sets it while the drainer writes
	memSink
}

func (w *brokenOutput) Write(p []byte) (int, error) {
	if w.broken.Load() {
		return 0, errOutput
	}
	return w.memSink.Write(p)
}
