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
