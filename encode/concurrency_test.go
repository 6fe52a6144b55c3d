package encode

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestConcurrentAppend shares encoders (and the global time and source
// caches) between goroutines whose records span many seconds and zones; every
// line must equal the one the real slog handler produces. Run with -race.
func TestConcurrentAppend(t *testing.T) {
	const goroutines, perG = 8, 300
	pc := callerPC()
	zones := []*time.Location{time.UTC, tzA, tzB, time.Local}
	encs := map[Format]*Encoder{}
	for _, f := range []Format{JSON, Text} {
		encs[f] = New(Options{Format: f, AddSource: true, SlogLevelNames: true}).WithGroup("g").WithAttrs([]slog.Attr{slog.Int("a", 1)})
	}
	chain := []step{{group: "g"}, {attrs: []slog.Attr{slog.Int("a", 1)}}}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := 0; i < perG; i++ {
				tm := fixedTime.Add(time.Duration(g*perG+i) * 777 * time.Millisecond).In(zones[(g+i)%len(zones)])
				r := record(tm, slog.LevelInfo, "m", pc, []slog.Attr{slog.Time("at", tm.In(zones[i%len(zones)])), slog.Int("i", i)})
				for f, e := range encs {
					buf = e.Append(buf[:0], r, nil)
					if want := reference(t, f, true, nil, chain, r); want != string(buf) {
						errs <- fmt.Errorf("goroutine %d record %d:\nwant %q\n got %q", g, i, want, buf)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestBadInputNoPanic feeds inputs slog itself cannot survive or that make
// invalid JSON, and checks the encoders still produce one line.
func TestBadInputNoPanic(t *testing.T) {
	cyc := &groupCycle{}
	deep := slog.Int("leaf", 1)
	for i := 0; i < maxDepth+10; i++ {
		deep = slog.Group("d", deep)
	}
	attrs := []slog.Attr{slog.Any("cycle", cyc), deep}
	for _, f := range []Format{JSON, Text, Logfmt, Console} {
		line := New(Options{Format: f}).Append(nil, record(fixedTime, slog.LevelInfo, "m", 0, attrs), nil)
		require.Contains(t, string(line), errDepth)
		require.Equal(t, byte('\n'), line[len(line)-1])
	}
}

// groupCycle's LogValue returns a group containing itself: slog recurses
// until the stack overflows; the encoders stop at maxDepth.
type groupCycle struct{}

func (g *groupCycle) LogValue() slog.Value { return slog.GroupValue(slog.Any("again", g)) }
