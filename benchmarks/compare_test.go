package benchmarks

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus/benchmarks/contestants"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

// TestCompareSmoke runs every contestant of cmd/compare once, in-process,
// at 1 and 4 goroutines with a tiny N, and checks what each must deliver:
// the lossless ones write every record exactly once, asyncbus-drop accounts
// for every record (file + drop markers), zerolog-diode writes only whole,
// distinct records (its losses are allowed, and counted), and noop writes
// nothing.
func TestCompareSmoke(t *testing.T) {
	const n = 2000
	res, err := harness.Run(context.Background(), harness.Config{
		Contestants: contestants.All(),
		Goroutines:  []int{1, 4},
		N:           n,
		Repeat:      1,
		SampleEvery: 7,
		TempDir:     t.TempDir(),
	})
	require.NoError(t, err)
	require.Empty(t, res.Failures)
	require.Len(t, res.Samples, 2*len(contestants.Names()))
	seen := map[string]int{}
	for _, s := range res.Samples {
		seen[s.Contestant]++
		where := fmt.Sprintf("%s@%d", s.Contestant, s.Goroutines)
		assert.True(t, s.Count.Verified(), "%s: %+v", where, s.Count)
		assert.Positive(t, s.RecordsPerSec, where)
		assert.Positive(t, s.Samples, where)
		switch {
		case s.Discards:
			assert.Zero(t, s.Count.Bytes, where)
		case !contestants.MayLose(s.Contestant):
			assert.Zero(t, s.Lost, where)
			assert.EqualValues(t, n, s.Count.Lines, where)
		case contestants.MustAccount(s.Contestant):
			assert.Zero(t, s.Unaccounted, where)
		default: // zerolog-diode: losses allowed, never more than N
			assert.GreaterOrEqual(t, s.Lost, int64(0), where)
			assert.LessOrEqual(t, s.Lost, int64(n), where)
		}
		if s.Contestant == contestants.AsyncbusBlock {
			assert.EqualValues(t, n, s.HandlerStats["Written"], where)
		}
		if s.Contestant == contestants.Zerolog {
			_, ok := s.HandlerStats["Missed"]
			assert.True(t, ok, "zerolog-diode reports its alert count")
		}
	}
	for _, name := range contestants.Names() {
		assert.Equal(t, 2, seen[name], name)
	}
	assert.Len(t, res.Summaries, 2*len(contestants.Names()))
}

// BenchmarkCompare measures each contestant with b.RunParallel on the
// reference record into a real file. The goroutine count is GOMAXPROCS
// (set it with -cpu, e.g. -cpu 1,4,16). The flush (until every record is
// in the file) is inside the timed region, so the asynchronous contestants
// pay for their drain; lost/op is the fraction of records missing from the
// file afterwards.
//
//	go test -run '^$' -bench Compare -cpu 1,4,16 -benchmem
func BenchmarkCompare(b *testing.B) {
	for _, c := range contestants.All() {
		b.Run(c.Name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "bench.log"))
			require.NoError(b, err)
			defer f.Close()
			h, flush, err := c.New(f)
			require.NoError(b, err)
			closer, _ := h.(interface{ Close() error })
			logger := slog.New(h)
			ctx := context.Background()
			var calls atomic.Int64 // one Add per goroutine, not per call
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					harness.LogReference(ctx, logger, i)
					i++
				}
				calls.Add(int64(i))
			})
			if flush != nil {
				require.NoError(b, flush())
			}
			b.StopTimer()
			if closer != nil {
				require.NoError(b, closer.Close())
			}
			data, err := os.ReadFile(f.Name())
			require.NoError(b, err)
			// Drop-marker lines are not records.
			lines := int64(bytes.Count(data, []byte{'\n'}) - bytes.Count(data, []byte(harness.DropMarkerMsg)))
			if !c.Discards {
				lost := calls.Load() - lines
				b.ReportMetric(float64(lost)/float64(b.N), "lost/op")
			}
		})
	}
}
