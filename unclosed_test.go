package asyncbus_test

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// syncBuffer is an output the test reads while handlers may still write.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestUnreachableHandlersAreClosed: 50 handlers, each given a record and
// dropped without Close, are closed once the garbage collector finds them
// unreachable: the goroutines return to their number before, every record
// is in its output, and the missing Close is reported once. It runs in a
// child process, whose only handlers are these: the report is made once
// per process.
func TestUnreachableHandlersAreClosed(t *testing.T) {
	if os.Getenv("ASYNCBUS_UNCLOSED_CHILD") != "1" {
		c := exec.Command(os.Args[0], "-test.run=^TestUnreachableHandlersAreClosed$", "-test.count=1", "-test.v")
		c.Env = append(os.Environ(), "ASYNCBUS_UNCLOSED_CHILD=1")
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestUnreachableHandlersAreClosed")
		return
	}
	before := runtime.NumGoroutine()
	var mu sync.Mutex
	var reports []string
	onError := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, err.Error())
	}
	outs := make([]*syncBuffer, 50)
	for i := range outs {
		outs[i] = &syncBuffer{}
		h := asyncbus.NewHandler(outs[i], &asyncbus.Options{OnError: onError})
		slog.New(h.Named("dropped")).Info("queued", "i", i)
	}
	require.Greater(t, runtime.NumGoroutine(), before, "the handlers' goroutines run")
	// Polled on this goroutine (require.Eventually would add one of its
	// own to the count), each turn driven by a collection.
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > before; {
		require.True(t, time.Now().Before(deadline), "every handler's goroutines return: %d left of %d", runtime.NumGoroutine(), before)
		runtime.GC() // finds the handlers unreachable and queues their cleanups
		time.Sleep(10 * time.Millisecond)
	}
	for i, out := range outs {
		require.Contains(t, out.String(), `"msg":"queued","logger":"dropped","i":`+strconv.Itoa(i)+"}", "handler %d's record", i)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reports, 1, "one report: %q", reports)
	require.True(t, strings.HasPrefix(reports[0], "asyncbus: a handler became unreachable without Close"), reports[0])
}
