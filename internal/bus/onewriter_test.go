package bus

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// drainerFrame is the drainer goroutine's function: every call into the
// output must have it on its stack.
const drainerFrame = "github.com/asyncbus/asyncbus/internal/bus.(*Bus).run("

// drainerOnlyWriter is an output that checks, on every Write, WriteBatch
// and Sync, that the calling goroutine is the drainer (its run function is
// on the stack: no goroutine ids), and misbehaves as told: slow (each call
// sleeps), hung (calls block until gate closes) or failing (every third
// call fails).
type drainerOnlyWriter struct {
	slow    time.Duration
	gate    chan struct{} // nil: never hangs
	failing bool

	calls     atomic.Int64
	strangers atomic.Int64 // calls from another goroutine
	mu        sync.Mutex
	stranger  string // the first such caller's stack
}

func (w *drainerOnlyWriter) check() {
	w.calls.Add(1)
	buf := make([]byte, 64<<10)
	stack := buf[:runtime.Stack(buf, false)]
	if !bytes.Contains(stack, []byte(drainerFrame)) {
		if w.strangers.Add(1) == 1 {
			w.mu.Lock()
			w.stranger = string(stack)
			w.mu.Unlock()
		}
	}
	if w.gate != nil {
		<-w.gate
	}
	if w.slow > 0 {
		time.Sleep(w.slow) // the output's own pace, not a synchronisation
	}
}

func (w *drainerOnlyWriter) fail() error {
	if w.failing && w.calls.Load()%3 == 0 {
		return errSink
	}
	return nil
}

func (w *drainerOnlyWriter) Write(p []byte) (int, error) {
	w.check()
	if err := w.fail(); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *drainerOnlyWriter) Sync() error {
	w.check()
	return w.fail()
}

// drainerOnlyBatch is drainerOnlyWriter as a BatchWriter.
type drainerOnlyBatch struct{ *drainerOnlyWriter }

func (w drainerOnlyBatch) WriteBatch(recs [][]byte) (int, error) {
	w.check()
	if err := w.fail(); err != nil {
		return 0, err
	}
	return len(recs), nil
}

// No goroutine but the drainer calls the output, in either overflow mode,
// under quiet and busy loads, with Error and SyncLevel records, Flush and
// Close, into fast, slow, failing and hung outputs: every wait is for the
// drainer, never a call of the caller's own.
func TestOnlyTheDrainerCallsTheOutput(t *testing.T) {
	outputs := []struct {
		name string
		w    func() *drainerOnlyWriter
	}{
		{"fast", func() *drainerOnlyWriter { return &drainerOnlyWriter{} }},
		{"slow", func() *drainerOnlyWriter { return &drainerOnlyWriter{slow: time.Millisecond} }},
		{"failing", func() *drainerOnlyWriter { return &drainerOnlyWriter{failing: true} }},
		{"hung", func() *drainerOnlyWriter { return &drainerOnlyWriter{gate: make(chan struct{})} }},
	}
	for _, mode := range []Overflow{Block, Drop} {
		for _, out := range outputs {
			for _, batch := range []bool{false, true} {
				for _, load := range []string{"quiet", "busy"} {
					name := fmt.Sprintf("%v/%s/batch=%v/%s", mode, out.name, batch, load)
					t.Run(name, func(t *testing.T) {
						w := out.w()
						var output interface{ Write([]byte) (int, error) } = w
						if batch {
							output = drainerOnlyBatch{w}
						}
						b := newTestBus(t, output, Config{Capacity: 4096, Overflow: mode, QuietWait: true, OnError: func(error) {}}, fastRetry)
						producers, each := 1, 20
						if load == "busy" {
							producers, each = 4, 300
						}
						var wg sync.WaitGroup
						for p := range producers {
							wg.Go(func() {
								for i := range each {
									rec := payload(p*each+i, 60)
									switch i % 10 {
									case 3:
										_ = b.EnqueueWritten(rec) // an Error record
									case 7:
										_ = b.Enqueue(rec)
										_ = b.SyncBounded(context.Background()) // a SyncLevel record
									default:
										_ = b.Enqueue(rec)
									}
								}
							})
						}
						awaitAll(t, &wg, "producers")
						ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
						defer cancel()
						_ = b.Flush(ctx)
						_ = b.Close(ctx)
						if w.gate != nil {
							close(w.gate) // the hung call returns; the drainer exits
						}
						<-b.done
						require.Positive(t, w.calls.Load(), "the output was called")
						w.mu.Lock()
						defer w.mu.Unlock()
						assert.Zero(t, w.strangers.Load(), "a goroutine other than the drainer called the output:\n%s", w.stranger)
						st := b.Stats()
						assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed, "the books balance: %+v", st)
					})
				}
			}
		}
	}
}

// The check itself: a call from a goroutine that is not the drainer is
// caught.
func TestDrainerOnlyWriterCatchesAStranger(t *testing.T) {
	w := &drainerOnlyWriter{}
	_, _ = w.Write([]byte("x\n"))
	assert.EqualValues(t, 1, w.strangers.Load())
	assert.Contains(t, w.stranger, "TestDrainerOnlyWriterCatchesAStranger")
}
