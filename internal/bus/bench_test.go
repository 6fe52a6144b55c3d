package bus

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// sinkWriter is what each contender exposes to the benchmark.
type sinkWriter interface {
	Write(p []byte) error
	Close() error
}

// busWriter is this package.
type busWriter struct{ b *Bus }

func (w busWriter) Write(p []byte) error { return w.b.Enqueue(p) }
func (w busWriter) Close() error         { return w.b.Close(context.Background()) }

// mutexWriter is the synchronous baseline: a mutex around a bufio.Writer.
type mutexWriter struct {
	mu sync.Mutex
	bw *bufio.Writer
}

func (w *mutexWriter) Write(p []byte) error {
	w.mu.Lock()
	_, err := w.bw.Write(p)
	w.mu.Unlock()
	return err
}

func (w *mutexWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bw.Flush()
}

// chanWriter is the LAW design (seed 003): each Write copies the record into a
// pooled buffer and sends it on a buffered channel; one goroutine drains the
// channel into a bufio.Writer.
type chanWriter struct {
	ch   chan *[]byte
	pool sync.Pool
	bw   *bufio.Writer
	done chan struct{}
}

func newChanWriter(w io.Writer) *chanWriter {
	c := &chanWriter{ch: make(chan *[]byte, 8192), bw: bufio.NewWriterSize(w, 64<<10), done: make(chan struct{})}
	c.pool.New = func() any { b := make([]byte, 0, 256); return &b }
	go func() {
		defer close(c.done)
		for p := range c.ch {
			_, _ = c.bw.Write(*p)
			*p = (*p)[:0]
			c.pool.Put(p)
		}
		_ = c.bw.Flush()
	}()
	return c
}

func (c *chanWriter) Write(p []byte) error {
	buf := c.pool.Get().(*[]byte)
	*buf = append(*buf, p...)
	c.ch <- buf
	return nil
}

func (c *chanWriter) Close() error {
	close(c.ch)
	<-c.done
	return nil
}

type contender struct {
	name string
	make func(tb testing.TB, w io.Writer) sinkWriter
}

var contenders = []contender{
	{"bus", func(tb testing.TB, w io.Writer) sinkWriter {
		b, err := testNew(w, Config{})
		if err != nil {
			tb.Fatal(err)
		}
		return busWriter{b}
	}},
	{"mutex_bufio", func(_ testing.TB, w io.Writer) sinkWriter {
		return &mutexWriter{bw: bufio.NewWriterSize(w, 64<<10)}
	}},
	{"chan_bufio", func(_ testing.TB, w io.Writer) sinkWriter { return newChanWriter(w) }},
}

func benchSinks(tb testing.TB) map[string]func() io.Writer {
	return map[string]func() io.Writer{
		"discard": func() io.Writer { return io.Discard },
		"file": func() io.Writer {
			f, err := os.Create(filepath.Join(tb.TempDir(), "bench.log"))
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { _ = f.Close() })
			return f
		},
	}
}

var record200 = func() []byte { return payload(7, 200) }()

// runShares splits n records among goroutines (the first takes the
// remainder), runs produce with each share on a goroutine of its own, and
// waits for all of them.
func runShares(n, goroutines int, produce func(share int)) {
	var wg sync.WaitGroup
	for g := range goroutines {
		share := n / goroutines
		if g == 0 {
			share += n % goroutines
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			produce(share)
		}()
	}
	wg.Wait()
}

// BenchmarkEnqueue compares the bus with the two baselines on 200-byte
// records, one producer and b.RunParallel, into io.Discard and a real file.
// The timed region includes the final drain (Close), so every record has
// reached the sink. Use e.g. -benchtime=2000000x to bound the file size.
func BenchmarkEnqueue(b *testing.B) {
	for _, sinkName := range []string{"discard", "file"} {
		for _, c := range contenders {
			for _, par := range []bool{false, true} {
				name := sinkName + "/" + c.name + "/single"
				if par {
					name = sinkName + "/" + c.name + "/parallel"
				}
				b.Run(name, func(b *testing.B) {
					w := c.make(b, benchSinks(b)[sinkName]())
					b.ReportAllocs()
					b.SetBytes(int64(len(record200)))
					b.ResetTimer()
					if par {
						b.RunParallel(func(pb *testing.PB) {
							for pb.Next() {
								if err := w.Write(record200); err != nil {
									b.Error(err)
									return
								}
							}
						})
					} else {
						for range b.N {
							if err := w.Write(record200); err != nil {
								b.Fatal(err)
							}
						}
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
				})
			}
		}
	}
}

// BenchmarkFileSinkMode measures the two ways the drainer can hand a batch of
// 200-byte records to an *os.File: writev(2) of the ring views, or a copy into
// one staging buffer and a single write(2). writevRegular's default follows it.
func BenchmarkFileSinkMode(b *testing.B) {
	for _, mode := range []struct {
		name   string
		writev bool
	}{{"writev", true}, {"copy_write", false}} {
		b.Run(mode.name, func(b *testing.B) {
			saved, savedRegular := useWritev, writevRegular
			useWritev, writevRegular = mode.writev, mode.writev
			defer func() { useWritev, writevRegular = saved, savedRegular }()
			f := benchSinks(b)["file"]()
			bus, err := testNew(f, Config{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(record200)))
			b.ResetTimer()
			for range b.N {
				if err := bus.Enqueue(record200); err != nil {
					b.Fatal(err)
				}
			}
			if err := bus.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			st := bus.Stats()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(st.Written)/float64(max(st.WriteCalls, 1)), "records/call")
		})
	}
}

// flushSentinel asks a chanWriter's goroutine to report that everything sent
// before it has been written.
var flushSentinel = new([]byte)

// newCallCostChanWriter is a chanWriter whose channel holds a whole chunk,
// so that the producer never waits on the consumer while it is timed.
func newCallCostChanWriter(w io.Writer, capacity int) (*chanWriter, func()) {
	c := &chanWriter{ch: make(chan *[]byte, capacity), bw: bufio.NewWriterSize(w, 64<<10), done: make(chan struct{})}
	c.pool.New = func() any { b := make([]byte, 0, 256); return &b }
	flushed := make(chan struct{})
	go func() {
		defer close(c.done)
		for p := range c.ch {
			if p == flushSentinel {
				_ = c.bw.Flush()
				flushed <- struct{}{}
				continue
			}
			_, _ = c.bw.Write(*p)
			*p = (*p)[:0]
			c.pool.Put(p)
		}
		_ = c.bw.Flush()
	}()
	return c, func() { c.ch <- flushSentinel; <-flushed }
}

// BenchmarkEnqueueCall measures what a producer pays per record while the
// queue has room: the cost a log call adds to the application. Records go
// in timed chunks of callCostChunk; between chunks the timer stops and the
// queue is drained, so no contender ever waits for its consumer while timed
// (BenchmarkEnqueue measures end-to-end throughput instead). One untimed
// chunk first faults the ring's pages in. "parallel"
// splits each chunk over GOMAXPROCS goroutines. Sinks: io.Discard and a real file.
func BenchmarkEnqueueCall(b *testing.B) {
	const callCostChunk = 1 << 19 // 512 Ki records of 208 ring bytes fill 40 % of a 256 MiB ring, below the watermark
	type contender struct {
		name string
		make func(b *testing.B, sink io.Writer) (write func([]byte) error, drain func(), stop func())
	}
	contenders := []contender{
		{"bus", func(b *testing.B, sink io.Writer) (func([]byte) error, func(), func()) {
			bus, err := testNew(sink, Config{Capacity: 256 << 20, MaxLatency: DefaultMaxLatency})
			if err != nil {
				b.Fatal(err)
			}
			return bus.Enqueue,
				func() { _ = bus.Flush(context.Background()) },
				func() { _ = bus.Close(context.Background()) }
		}},
		{"mutex_bufio", func(b *testing.B, sink io.Writer) (func([]byte) error, func(), func()) {
			w := &mutexWriter{bw: bufio.NewWriterSize(sink, 64<<10)}
			return w.Write, func() { _ = w.Close() }, func() {}
		}},
		{"chan_bufio", func(b *testing.B, sink io.Writer) (func([]byte) error, func(), func()) {
			c, flush := newCallCostChanWriter(sink, callCostChunk+1)
			return c.Write, flush, func() { _ = c.Close() }
		}},
	}
	for _, sinkName := range []string{"discard", "file"} {
		for _, parallel := range []bool{false, true} {
			for _, c := range contenders {
				name := sinkName + "/" + c.name + "/single"
				goroutines := 1
				if parallel {
					name = sinkName + "/" + c.name + "/parallel"
					goroutines = runtime.GOMAXPROCS(0)
				}
				b.Run(name, func(b *testing.B) {
					write, drain, stop := c.make(b, benchSinks(b)[sinkName]())
					defer stop()
					// Warm-up: one untimed chunk, so that the ring's pages are
					// faulted in (as they are in a running service) and pools
					// are filled.
					for range callCostChunk {
						_ = write(record200)
					}
					drain()
					b.ReportAllocs()
					b.ResetTimer()
					for done := 0; done < b.N; {
						n := min(callCostChunk, b.N-done)
						runShares(n, goroutines, func(share int) {
							for range share {
								if err := write(record200); err != nil {
									b.Error(err)
									return
								}
							}
						})
						done += n
						b.StopTimer()
						drain()
						b.StartTimer()
					}
					b.StopTimer()
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
				})
			}
		}
	}
}
