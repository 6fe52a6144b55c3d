package bus

import (
	"context"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smapsEntry returns the fields of /proc/self/smaps for the mapping that
// starts at addr (nil if there is none).
func smapsEntry(t *testing.T, addr uintptr) map[string]string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	require.NoError(t, err)
	var fields map[string]string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case strings.HasSuffix(f[0], ":"): // "Rss:   12 kB"
			if fields != nil {
				fields[strings.TrimSuffix(f[0], ":")] = strings.Join(f[1:], " ")
			}
		case fields != nil: // the next mapping's "start-end perms ..." line
			return fields
		default:
			start, _, _ := strings.Cut(f[0], "-")
			if v, err := strconv.ParseUint(start, 16, 64); err == nil && uintptr(v) == addr {
				fields = map[string]string{}
			}
		}
	}
	return fields
}

// thpMode is the kernel's transparent huge page mode: always, madvise or
// never ("" where the kernel has none).
func thpMode(t *testing.T) string {
	data, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	s := string(data)
	i, j := strings.Index(s, "["), strings.Index(s, "]")
	require.True(t, i >= 0 && j > i, "unexpected THP mode %q", s)
	return s[i+1 : j]
}

// A ring of a huge page or more is a mapping of its own, aligned to a
// huge page and advised to use them: the kernel says it is eligible
// wherever its THP mode allows. Once the drainer is done its pages are
// released (no resident memory; a late reader reads zeros), and once the
// Bus is unreachable the mapping goes.
func TestRingMapping(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) < 8 {
		b := newTestBus(t, io.Discard, Config{}, nil)
		assert.Nil(t, b.mapped, "32-bit platforms keep the ring on the heap")
		closeBus(t, b)
		return
	}
	b := newTestBus(t, io.Discard, Config{}, nil)
	require.NotNil(t, b.mapped)
	base := uintptr(b.base)
	assert.Zero(t, base%hugePage, "aligned to a huge page")
	all := uintptr(unsafe.Pointer(&b.mapped.all[0]))
	for i := range 1000 {
		require.NoError(t, b.Enqueue(payload(i, 8000))) // most of the ring
	}
	require.NoError(t, b.Flush(context.Background()))
	entry := smapsEntry(t, all)
	require.NotNil(t, entry, "the mapping is in smaps")
	want := map[string]string{"always": "1", "madvise": "1", "never": "0"}[thpMode(t)]
	if want != "" {
		assert.Equal(t, want, entry["THPeligible"], "THP mode %s", thpMode(t))
	}
	assert.NotEqual(t, "0 kB", entry["Rss"], "the ring was written")
	closeBus(t, b)
	<-b.done
	assert.Equal(t, "0 kB", smapsEntry(t, all)["Rss"], "pages released at the drainer's end")
	assert.Zero(t, atomic.LoadUint64(b.hdr(0)), "a late reader reads zeros")
	b = nil
	gone := false
	for range 100 {
		runtime.GC()
		if gone = smapsEntry(t, all) == nil; gone {
			break
		}
		runtime.Gosched() // cleanups run on their own goroutine
	}
	assert.True(t, gone, "the mapping at %#x went with the Bus", all)
}

// A ring smaller than a huge page stays on the heap: a mapping would
// round its resident memory up to a huge page.
func TestSmallRingOnTheHeap(t *testing.T) {
	b := newTestBus(t, io.Discard, Config{Capacity: hugePage / 2}, nil)
	assert.Nil(t, b.mapped)
	closeBus(t, b)
}

// abandonedWriter's calls return once a Close that gave up has taken the
// call over (callAbandoned), so that the drainer leaves its call while
// that Close is still counting the ring.
type abandonedWriter struct{ b atomic.Pointer[Bus] }

func (w *abandonedWriter) Write(p []byte) (int, error) {
	for w.b.Load().call.Load() != callAbandoned { // atomic, row call
		runtime.Gosched()
	}
	return len(p), nil
}

// A drainer whose call returns after a Close gave up keeps its ring until
// that Close has counted what is left in it: released under the count,
// the ring reads as zeros, and the count waited for ever for a commit.
// The drainer's exit must fall within the count, which scheduling decides,
// so the test makes five tries.
func TestAbandonedDrainerKeepsTheRingForTheCount(t *testing.T) {
	for range 5 {
		w := &abandonedWriter{}
		b := newTestBus(t, w, Config{Capacity: 8 << 20}, patient)
		w.b.Store(b)
		require.NotNil(t, b.mapped, "a ring of 8 MiB is a mapping of its own")
		require.NoError(t, b.Enqueue(payload(0, 100)))
		waitFor(t, "the first write in flight", func() bool { return b.callSince.Load() != 0 })
		const queued = 300_000 // 24-byte entries, 7.2 MB: a count that takes a while
		for i := 1; i <= queued; i++ {
			require.NoError(t, b.Enqueue(payload(i, 10)))
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		done := make(chan error, 1)
		go func() { done <- b.Close(ctx) }()
		select {
		case err := <-done:
			var gu *GiveUpError
			require.ErrorAs(t, err, &gu)
		case <-time.After(time.Minute): // a deadlock guard, not a timing assertion
			t.Fatal("Close never returned: its count read a released ring")
		}
		st := b.Stats()
		assert.EqualValues(t, queued+1, st.Failed, "the record in flight and every queued one")
		assert.Zero(t, st.Written)
	}
}
