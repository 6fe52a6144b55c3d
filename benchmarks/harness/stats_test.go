package harness

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	hundred := make([]int64, 100)
	for i := range hundred {
		hundred[i] = int64(i + 1)
	}
	thousand := make([]int64, 1000)
	for i := range thousand {
		thousand[i] = int64(i + 1)
	}
	tests := []struct {
		name string
		v    []int64
		p    float64
		want int64
	}{
		{"empty", nil, 50, 0},
		{"single", []int64{7}, 99.9, 7},
		{"p50 of 1..100", hundred, 50, 50},
		{"p99 of 1..100", hundred, 99, 99},
		{"p99.9 of 1..100 is the max", hundred, 99.9, 100},
		{"p100", hundred, 100, 100},
		{"p0 is the min", hundred, 0, 1},
		{"above 100 clamps", hundred, 150, 100},
		{"p99.9 of 1..1000", thousand, 99.9, 999},
		{"p50 of two", []int64{1, 2}, 50, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Percentile(tt.v, tt.p))
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		v    []float64
		want float64
	}{
		{"empty", nil, 0},
		{"one", []float64{3}, 3},
		{"odd unsorted", []float64{9, 1, 5}, 5},
		{"even", []float64{4, 1, 3, 2}, 2.5},
		{"outlier ignored", []float64{100, 101, 1e9}, 101},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.v...)
			assert.Equal(t, tt.want, Median(tt.v))
			assert.Equal(t, in, tt.v, "input must not be reordered")
		})
	}
}

func sampleFor(c string, g, rep int, rate float64, lost int64) Sample {
	return Sample{Contestant: c, Goroutines: g, Rep: rep, N: 100, RecordsPerSec: rate, P50NS: int64(rate), P99NS: 2 * int64(rate),
		Lost: lost, Unaccounted: lost, Count: LineCount{Lines: 100 - lost, Unique: 100 - lost}}
}

func TestSummarize(t *testing.T) {
	samples := []Sample{
		sampleFor("b", 4, 1, 10, 0), sampleFor("a", 4, 1, 30, 0),
		sampleFor("a", 1, 1, 5, 0), sampleFor("b", 1, 1, 50, 0),
		sampleFor("b", 4, 2, 20, 2), sampleFor("a", 4, 2, 10, 0),
		sampleFor("b", 4, 3, 30, 0), sampleFor("a", 4, 3, 20, 0),
	}
	got := Summarize(samples)
	require.Len(t, got, 4)
	var order []string
	for _, s := range got {
		order = append(order, fmt.Sprintf("%s/%d", s.Contestant, s.Goroutines))
	}
	assert.Equal(t, []string{"b/1", "a/1", "b/4", "a/4"}, order)
	b4 := got[2]
	assert.Equal(t, 3, b4.Runs)
	assert.InDelta(t, 20, b4.RecordsPerSec, 1e-9)
	assert.InDelta(t, 40, b4.P99NS, 1e-9)
	assert.Equal(t, int64(2), b4.Lost, "worst run's loss, not the median")
	assert.Equal(t, int64(2), b4.Unaccounted)
	assert.Equal(t, int64(98), b4.Lines)
	assert.True(t, b4.Verified)
	assert.Empty(t, Summarize(nil))

	t.Run("line accounting from one run", func(t *testing.T) {
		drop := func(rep int, lost int64, reported uint64) Sample {
			s := sampleFor("d", 1, rep, 1, lost)
			s.Count.MarkerDropped = reported
			s.Unaccounted = lost - int64(reported)
			return s
		}
		tests := []struct {
			name    string
			samples []Sample
			want    [4]int64 // lines, lost, reported, unaccounted
		}{
			{"most lost wins when all account", []Sample{drop(1, 5, 5), drop(2, 40, 40), drop(3, 0, 0)}, [4]int64{60, 40, 40, 0}},
			{"unaccounted wins over lost", []Sample{drop(1, 40, 40), drop(2, 3, 1), drop(3, 0, 0)}, [4]int64{97, 3, 1, 2}},
			{"over-reporting counts too", []Sample{drop(1, 1, 1), drop(2, 1, 4)}, [4]int64{99, 1, 4, -3}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := Summarize(tt.samples)
				require.Len(t, got, 1)
				s := got[0]
				assert.Equal(t, tt.want, [4]int64{s.Lines, s.Lost, int64(s.DroppedReported), s.Unaccounted})
				assert.Equal(t, int64(100), s.Lines+int64(s.DroppedReported)+s.Unaccounted)
			})
		}
	})
}
