package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain serves the child processes of TestRunIsolated.
func TestMain(m *testing.M) {
	if IsChild() {
		os.Exit(ServeChild(testContestants(), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// dropper is a test contestant that drops every k-th record, counting the
// drops, and writes one JSON drop-marker line on Flush, like asyncbus.
type dropper struct {
	h       slog.Handler
	every   uint64
	n       atomic.Uint64 // records seen; atomic because producers race on it
	dropped atomic.Uint64 // drops not yet reported; atomic for the same reason
}

func (d *dropper) Enabled(context.Context, slog.Level) bool { return true }
func (d *dropper) Handle(ctx context.Context, r slog.Record) error {
	if d.n.Add(1)%d.every == 0 {
		d.dropped.Add(1)
		return nil
	}
	return d.h.Handle(ctx, r)
}
func (d *dropper) WithAttrs([]slog.Attr) slog.Handler { return d }
func (d *dropper) WithGroup(string) slog.Handler      { return d }
func (d *dropper) Flush() error {
	if n := d.dropped.Swap(0); n > 0 {
		r := slog.NewRecord(time.Now(), slog.LevelWarn, DropMarkerMsg, 0)
		r.AddAttrs(slog.Uint64("dropped", n))
		return d.h.Handle(context.Background(), r)
	}
	return nil
}

// stats lets handlerStats find a Stats method.
type fakeStats struct {
	Enqueued uint64
	Depth    int
	Neg      int
	Name     string
	hidden   uint64
}

// fakeDrainerStats lets handlerStats find a DrainerStats method, as
// asyncbus's handler has.
type fakeDrainerStats struct {
	Parks uint64
}

type statsHandler struct{ dropper }

func (s *statsHandler) Stats() fakeStats {
	return fakeStats{Enqueued: s.n.Load(), Depth: 3, Neg: -1, Name: "x", hidden: 9}
}

func (s *statsHandler) DrainerStats() *fakeDrainerStats { return &fakeDrainerStats{Parks: 2} }

type noop struct{}

func (noop) Enabled(context.Context, slog.Level) bool  { return true }
func (noop) Handle(context.Context, slog.Record) error { return nil }
func (n noop) WithAttrs([]slog.Attr) slog.Handler      { return n }
func (n noop) WithGroup(string) slog.Handler           { return n }

func testContestants() []Contestant {
	return []Contestant{
		{Name: "slog-json", New: func(f *os.File) (slog.Handler, func() error, error) {
			return slog.NewJSONHandler(f, nil), nil, nil
		}},
		{Name: "slog-text", New: func(f *os.File) (slog.Handler, func() error, error) {
			return slog.NewTextHandler(f, nil), nil, nil
		}},
		{Name: "dropper", New: func(f *os.File) (slog.Handler, func() error, error) {
			d := &statsHandler{dropper{h: slog.NewJSONHandler(f, nil), every: 7}}
			return d, d.Flush, nil
		}},
		{Name: "noop", Discards: true, New: func(*os.File) (slog.Handler, func() error, error) {
			return noop{}, nil, nil
		}},
	}
}

func contestant(t *testing.T, name string) Contestant {
	for _, c := range testContestants() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no contestant %q", name)
	return Contestant{}
}

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

func jsonLine(seq int) string {
	return fmt.Sprintf(`{"time":"2026-11-30T00:00:00Z","level":"INFO","msg":"request handled","method":"GET","status":200,"seq":%d}`, seq)
}

func textLine(seq int) string {
	return fmt.Sprintf(`time=2026-11-30T00:00:00Z level=INFO msg="request handled" method=GET status=200 seq=%d`, seq)
}

func TestCountLines(t *testing.T) {
	tests := []struct {
		name       string
		n, g       int
		lines      []string
		noFinalNL  bool
		want       LineCount
		lost       int64
		unaccount  int64
		verifiedOK bool
	}{
		{
			name: "json all present, two goroutines", n: 4, g: 2,
			lines: []string{jsonLine(0), jsonLine(SeqStride + 1), jsonLine(1), jsonLine(SeqStride)},
			want:  LineCount{Lines: 4, Unique: 4}, verifiedOK: true,
		},
		{
			name: "text with uneven split", n: 3, g: 2,
			lines: []string{textLine(0), textLine(1), textLine(SeqStride)},
			want:  LineCount{Lines: 3, Unique: 3}, verifiedOK: true,
		},
		{
			name: "one lost", n: 3, g: 1,
			lines: []string{jsonLine(0), jsonLine(2)},
			want:  LineCount{Lines: 2, Unique: 2}, lost: 1, unaccount: 1, verifiedOK: true,
		},
		{
			name: "duplicate and out-of-range", n: 3, g: 1,
			lines: []string{jsonLine(0), jsonLine(0), jsonLine(3), jsonLine(SeqStride)},
			want:  LineCount{Lines: 4, Unique: 1, Duplicates: 1, Unparsed: 2}, lost: -1, unaccount: -1,
		},
		{
			name: "json drop markers account for the rest", n: 5, g: 1,
			lines: []string{jsonLine(0), `{"time":"x","level":"WARN","msg":"asyncbus: records dropped","dropped":3}`, jsonLine(4),
				`{"level":"WARN","msg":"asyncbus: records dropped","dropped":0}`},
			want: LineCount{Lines: 2, Unique: 2, Markers: 2, MarkerDropped: 3}, lost: 3, verifiedOK: true,
		},
		{
			name: "text drop marker", n: 2, g: 1,
			lines: []string{textLine(1), `time=x level=WARN msg="asyncbus: records dropped" dropped=1`},
			want:  LineCount{Lines: 1, Unique: 1, Markers: 1, MarkerDropped: 1}, lost: 1, verifiedOK: true,
		},
		{
			name: "marker without a count", n: 1, g: 1,
			lines: []string{jsonLine(0), `{"msg":"asyncbus: records dropped","dropped":"many"}`},
			want:  LineCount{Lines: 1, Unique: 1, Markers: 1, BadMarkers: 1},
		},
		{
			name: "torn last line without newline", n: 2, g: 1, noFinalNL: true,
			lines: []string{jsonLine(0), `{"time":"2026","msg":"request han`},
			want:  LineCount{Lines: 2, Unique: 1, Unparsed: 1},
		},
		{
			name: "blank and CRLF lines", n: 1, g: 1,
			lines: []string{"", textLine(0) + "\r", "   "},
			want:  LineCount{Lines: 1, Unique: 1}, verifiedOK: true,
		},
		{
			name: "key must be whole", n: 1, g: 1,
			lines: []string{`xseq=0 other=1`},
			want:  LineCount{Lines: 1, Unparsed: 1}, lost: 0,
		},
		{
			name: "empty file", n: 2, g: 2,
			want: LineCount{}, lost: 2, unaccount: 2, verifiedOK: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Join(tt.lines, "\n")
			if len(tt.lines) > 0 && !tt.noFinalNL {
				text += "\n"
			}
			tt.want.Bytes = int64(len(text))
			got, err := CountLines(strings.NewReader(text), tt.n, tt.g)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.verifiedOK, got.Verified())
			lost := int64(tt.n) - got.Lines
			assert.Equal(t, tt.lost, lost, "lost")
			assert.Equal(t, tt.unaccount, lost-int64(got.MarkerDropped), "unaccounted")
		})
	}
}

func TestCountLinesErrors(t *testing.T) {
	_, err := CountLines(strings.NewReader(""), 1, 0)
	require.Error(t, err)
	_, err = CountLines(strings.NewReader(""), -1, 1)
	require.Error(t, err)
	long := strings.Repeat("a", maxLine+10)
	_, err = CountLines(strings.NewReader(long), 1, 1)
	require.ErrorIs(t, err, bufio.ErrTooLong)
	_, err = CountLines(iotestErrReader{}, 1, 1)
	require.ErrorContains(t, err, "boom")
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

func TestIntAttr(t *testing.T) {
	tests := []struct {
		line, key string
		want      uint64
		ok        bool
	}{
		{`{"seq":12}`, "seq", 12, true},
		{`{"a":1,"seq":3000000007,"b":2}`, "seq", 3000000007, true},
		{`seq=5`, "seq", 5, true},
		{`a=1 seq=5 b=2`, "seq", 5, true},
		{"a=1\tseq=5", "seq", 5, true},
		{`a=1 xseq=5`, "seq", 0, false},
		{`xseq=5 seq=6`, "seq", 6, true},
		{`seq=5x`, "seq", 0, false},
		{`seq=-5`, "seq", 0, false},
		{`seq=`, "seq", 0, false},
		{`seq=99999999999999999999`, "seq", 0, false},
		{`msg="asyncbus: records dropped" dropped=7`, "dropped", 7, true},
		{`{"msg":"asyncbus: records dropped","dropped":7}`, "dropped", 7, true},
		{`nothing here`, "seq", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			v, ok := intAttr([]byte(tt.line), tt.key)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, v)
		})
	}
}

func TestPerGoroutineCoversN(t *testing.T) {
	for _, tt := range []struct{ n, g int }{{1, 1}, {10, 3}, {2000, 16}, {7, 7}} {
		sum := 0
		for g := 0; g < tt.g; g++ {
			sum += perGoroutine(tt.n, tt.g, g)
		}
		assert.Equal(t, tt.n, sum, "n=%d g=%d", tt.n, tt.g)
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

func testResults() *Results {
	samples := []Sample{
		sampleFor("slog|file", 1, 1, 250e3, 0), sampleFor("fast", 1, 1, 1.5e6, 0), sampleFor("noop", 1, 1, 9e6, 0),
		sampleFor("slog|file", 16, 1, 200e3, 0), sampleFor("fast", 16, 1, 2e6, 3), sampleFor("noop", 16, 1, 12e6, 0),
	}
	samples[2].Discards, samples[5].Discards = true, true
	samples[4].Count.MarkerDropped = 3
	samples[4].Unaccounted = 0
	samples[1].Count.Duplicates = 1
	return &Results{
		Machine: Machine{GOOS: "linux", GOARCH: "amd64", NumCPU: 2, GOMAXPROCS: 2, GoVersion: "go1.26", CPUModel: "Test <CPU> & co"},
		N:       100, Goroutines: []int{1, 16}, Repeat: 1, IdleNS: int64(time.Second), SampleEvery: 1,
		Contestants: []string{"slog|file", "fast", "noop"},
		Samples:     samples, Summaries: Summarize(samples),
		Failures: []string{"broken, 4 goroutines, rep 1: boom"},
	}
}

func TestMarkdown(t *testing.T) {
	r := testResults()
	md := r.Markdown("slog|file")
	assert.Contains(t, md, "### 1 goroutine\n")
	assert.Contains(t, md, "### 16 goroutines\n")
	assert.Contains(t, md, "Test <CPU> & co")
	assert.Contains(t, md, `vs slog\|file`)
	assert.Contains(t, md, "| fast | 1.50 M/s | 6.00× |")
	assert.Contains(t, md, "| fast | 2.00 M/s | 10.00× |")
	assert.Contains(t, md, "| slog\\|file | 250 k/s | 1.00× |")
	assert.Contains(t, md, "n/a (discards)")
	assert.Contains(t, md, "| 97 | 3 | 3 |", "lines, lost, dropped of the dropping run")
	assert.Contains(t, md, "| 100 * |", "unverified lines are flagged")
	assert.Contains(t, md, "- broken, 4 goroutines, rep 1: boom")
	for _, table := range strings.Split(md, "### ")[1:] {
		var rows int
		for _, l := range strings.Split(table, "\n") {
			if strings.HasPrefix(l, "|") {
				assert.Equal(t, 16, strings.Count(strings.ReplaceAll(l, `\|`, ""), "|"), "cells in %q", l)
			}
			if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| contestant") {
				rows++
				assert.Equal(t, 16, strings.Count(strings.ReplaceAll(l, `\|`, ""), "|"), "cells in %q", l)
			}
		}
		assert.Equal(t, 3, rows)
	}
	noBase := r.Markdown("")
	assert.NotContains(t, noBase, "vs ")
}

func requireWellFormedXML(t *testing.T, b []byte) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(string(b)))
	d.Strict = true
	depth, elems := 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				require.Equal(t, "svg", tok.Name.Local)
			}
			depth++
			elems++
		case xml.EndElement:
			depth--
		}
	}
	require.Equal(t, 0, depth)
	require.Greater(t, elems, 1)
}

func TestSVGWellFormed(t *testing.T) {
	tests := []struct {
		name string
		r    *Results
	}{
		{"full", testResults()},
		{"empty", &Results{}},
		{"one goroutine count, zero rates", &Results{Goroutines: []int{4}, Contestants: []string{"<a&b>"},
			Summaries: []Summary{{Contestant: "<a&b>", Goroutines: 4}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svg := tt.r.SVG()
			requireWellFormedXML(t, svg)
			for _, c := range tt.r.Contestants {
				assert.Contains(t, string(svg), esc(c))
			}
		})
	}
	svg := string(testResults().SVG())
	assert.Contains(t, svg, "<polyline", "a throughput line per contestant")
	assert.Equal(t, 9, strings.Count(svg, "fill-opacity=\"0.35\"><title>")+strings.Count(svg, "fill-opacity=\"0.65\"><title>")+strings.Count(svg, "fill-opacity=\"1\"><title>"),
		"three latency bars per contestant")
}

func TestTickLabel(t *testing.T) {
	dur := tickLabel(" ns", " µs", " ms", " s")
	rate := tickLabel(" /s", "k/s", "M/s")
	tests := []struct {
		f    func(float64) string
		v    float64
		want string
	}{
		{dur, 100, "100 ns"}, {dur, 1e3, "1 µs"}, {dur, 1e4, "10 µs"}, {dur, 1e7, "10 ms"}, {dur, 1e9, "1 s"}, {dur, 1e11, "100 s"},
		{rate, 1e5, "100k/s"}, {rate, 1e6, "1M/s"}, {rate, 1e9, "1000M/s"}, {rate, 10, "10 /s"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.f(tt.v))
	}
}

func TestLogAxis(t *testing.T) {
	a := newLogAxis([]float64{150, 0, -1, 2.5e4})
	assert.Equal(t, logAxis{2, 5}, a)
	assert.InDelta(t, panelH, a.y(100), 1e-9)
	assert.InDelta(t, 0, a.y(1e5), 1e-9)
	assert.InDelta(t, panelH, a.y(0), 1e-9)
	assert.Equal(t, logAxis{0, 1}, newLogAxis(nil))
	assert.Equal(t, logAxis{3, 4}, newLogAxis([]float64{1000}))
}

func TestMeasureEndToEnd(t *testing.T) {
	tests := []struct {
		name       string
		goroutines int
		every      int
	}{
		{"slog-json", 1, 1},
		{"slog-json", 4, 1},
		{"slog-text", 3, 10},
		{"dropper", 4, 1},
		{"noop", 2, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/g=%d", tt.name, tt.goroutines), func(t *testing.T) {
			dir := t.TempDir()
			const n = 2000
			s, err := Measure(contestant(t, tt.name), Job{Contestant: tt.name, Goroutines: tt.goroutines, N: n, SampleEvery: tt.every, TempDir: dir})
			require.NoError(t, err)
			left, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, left, "temporary file removed")

			assert.Equal(t, n, s.N)
			assert.Equal(t, tt.goroutines, s.Goroutines)
			assert.Greater(t, s.RecordsPerSec, 0.0)
			assert.Greater(t, s.ElapsedNS, int64(0))
			assert.GreaterOrEqual(t, s.Samples, n/tt.every)
			assert.LessOrEqual(t, s.Samples, n/tt.every+tt.goroutines)
			assert.LessOrEqual(t, s.P50NS, s.P99NS)
			assert.LessOrEqual(t, s.P99NS, s.P999NS)
			assert.LessOrEqual(t, s.P999NS, s.MaxNS)
			assert.Greater(t, s.AllocsPerRecord, 0.0, "slog's front end allocates for 7 attrs")
			assert.Greater(t, s.PeakRSSBytes, int64(0))
			assert.True(t, s.Count.Verified())
			assert.Zero(t, s.IdleWindowNS)
			switch tt.name {
			case "noop":
				assert.Zero(t, s.Count.Lines)
				assert.Zero(t, s.FileBytes)
				assert.Zero(t, s.Lost)
			case "dropper":
				assert.Equal(t, int64(n/7), s.Lost)
				assert.Equal(t, uint64(n/7), s.Count.MarkerDropped)
				assert.Equal(t, int64(1), s.Count.Markers)
				assert.Zero(t, s.Unaccounted)
				assert.Equal(t, map[string]uint64{"Enqueued": n, "Depth": 3, "Parks": 2}, s.HandlerStats)
			default:
				assert.Zero(t, s.Lost)
				assert.Zero(t, s.Unaccounted)
				assert.Equal(t, int64(n), s.Count.Unique)
				assert.Greater(t, s.FileBytes, int64(n*150))
			}
		})
	}
}

func TestMeasureIdleWindow(t *testing.T) {
	s, err := Measure(contestant(t, "slog-json"), Job{Contestant: "slog-json", Goroutines: 1, N: 100, SampleEvery: 1, Idle: 20 * time.Millisecond, TempDir: t.TempDir()})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, s.IdleWindowNS, (20 * time.Millisecond).Nanoseconds())
	assert.GreaterOrEqual(t, s.IdleCPUPercent, 0.0)
}

type closeRecorder struct {
	noop
	closed chan struct{}
	err    error
}

func (c *closeRecorder) Close() error { close(c.closed); return c.err }

func TestMeasureErrors(t *testing.T) {
	boom := errors.New("boom")
	okJob := Job{Contestant: "x", Goroutines: 1, N: 10, SampleEvery: 1}
	tests := []struct {
		name string
		c    Contestant
		j    Job
		want string
	}{
		{"constructor error", Contestant{Name: "x", New: func(*os.File) (slog.Handler, func() error, error) { return nil, nil, boom }}, okJob, "boom"},
		{"nil handler", Contestant{Name: "x", New: func(*os.File) (slog.Handler, func() error, error) { return nil, nil, nil }}, okJob, "nil handler"},
		{"nil constructor", Contestant{Name: "x"}, okJob, "no constructor"},
		{"flush error", Contestant{Name: "x", New: func(*os.File) (slog.Handler, func() error, error) {
			return noop{}, func() error { return boom }, nil
		}}, okJob, "flush: boom"},
		{"close error", Contestant{Name: "x", New: func(*os.File) (slog.Handler, func() error, error) {
			return &closeRecorder{closed: make(chan struct{}), err: boom}, nil, nil
		}}, okJob, "close: boom"},
		{"zero N", contestant(t, "noop"), Job{Goroutines: 1, SampleEvery: 1}, "N must be"},
		{"too many goroutines", contestant(t, "noop"), Job{Goroutines: 11, N: 10, SampleEvery: 1}, "goroutines"},
		{"zero SampleEvery", contestant(t, "noop"), Job{Goroutines: 1, N: 10}, "SampleEvery"},
		{"negative idle", contestant(t, "noop"), Job{Goroutines: 1, N: 10, SampleEvery: 1, Idle: -1}, "idle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.j.TempDir = t.TempDir()
			_, err := Measure(tt.c, tt.j)
			require.ErrorContains(t, err, tt.want)
			left, rerr := os.ReadDir(tt.j.TempDir)
			require.NoError(t, rerr)
			assert.Empty(t, left)
		})
	}
	t.Run("handler closed on flush error", func(t *testing.T) {
		rec := &closeRecorder{closed: make(chan struct{})}
		_, err := Measure(Contestant{Name: "x", New: func(*os.File) (slog.Handler, func() error, error) {
			return rec, func() error { return boom }, nil
		}}, Job{Goroutines: 1, N: 10, SampleEvery: 1, TempDir: t.TempDir()})
		require.ErrorIs(t, err, boom)
		select {
		case <-rec.closed:
		default:
			t.Fatal("handler not closed")
		}
	})
}

func TestRunInProcess(t *testing.T) {
	var progress strings.Builder
	cs := testContestants()
	dir := t.TempDir()
	res, err := Run(context.Background(), Config{
		Contestants: cs, Goroutines: []int{1, 4}, N: 400, Repeat: 2, TempDir: dir, Progress: &progress, Label: "test run",
	})
	require.NoError(t, err)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, left)
	assert.Empty(t, res.Failures)
	require.Len(t, res.Samples, 2*2*len(cs))
	// Alternation: each repeat visits every contestant, in RepOrder's
	// order, before the next repeat.
	var order, want []string
	for _, s := range res.Samples {
		order = append(order, fmt.Sprintf("%d/%d/%s", s.Rep, s.Goroutines, s.Contestant))
	}
	for rep := 1; rep <= 2; rep++ {
		for _, g := range []int{1, 4} {
			for _, c := range RepOrder(cs, rep) {
				want = append(want, fmt.Sprintf("%d/%d/%s", rep, g, c.Name))
			}
		}
	}
	assert.Equal(t, want, order)
	last := RepOrder(cs, 2)[len(cs)-1].Name
	require.Len(t, res.Summaries, 2*len(cs))
	for _, s := range res.Summaries {
		assert.Equal(t, 2, s.Runs)
		assert.Zero(t, s.Unaccounted, s.Contestant)
	}
	assert.Equal(t, 1, res.SampleEvery)
	assert.Equal(t, "test run", res.Label)
	assert.Contains(t, progress.String(), "\r[16/16] rep 2/2  4 goroutines  "+last)
	assert.True(t, strings.HasSuffix(progress.String(), "\r"))

	b, err := res.JSON()
	require.NoError(t, err)
	var back Results
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, res.Summaries, back.Summaries)
}

// TestRepOrder: over one period of the design (n repeats for an even
// number of contestants, 2n for an odd one) every contestant runs equally
// often in every position and right after every other contestant equally
// often; the design then starts again; rep < 1 does not panic.
func TestRepOrder(t *testing.T) {
	for n := 1; n <= 12; n++ {
		cs := make([]Contestant, n)
		for i := range cs {
			cs[i] = Contestant{Name: fmt.Sprint(i)}
		}
		period := n
		if n%2 == 1 {
			period = 2 * n
		}
		position := map[[2]string]int{} // contestant, position -> times
		after := map[[2]string]int{}    // predecessor, contestant -> times
		for rep := 1; rep <= period; rep++ {
			order := RepOrder(cs, rep)
			seen := map[string]bool{}
			for i, c := range order {
				require.False(t, seen[c.Name], "n %d rep %d runs %s twice", n, rep, c.Name)
				seen[c.Name] = true
				position[[2]string{c.Name, fmt.Sprint(i)}]++
				if i > 0 {
					after[[2]string{order[i-1].Name, c.Name}]++
				}
			}
			require.Len(t, seen, n)
			assert.Equal(t, order, RepOrder(cs, rep+period), "n %d: the design repeats", n)
		}
		assert.Len(t, position, n*n, "n %d: every contestant in every position", n)
		for k, v := range position {
			assert.Equal(t, period/n, v, "n %d: %v", n, k)
		}
		if n > 1 {
			assert.Len(t, after, n*(n-1), "n %d: every contestant after every other", n)
			for k, v := range after {
				assert.Equal(t, period/n, v, "n %d: %v", n, k)
			}
		}
	}
	assert.Nil(t, RepOrder(nil, 3))
	cs := testContestants()
	names := func(cs []Contestant) (n []string) {
		for _, c := range cs {
			n = append(n, c.Name)
		}
		return n
	}
	assert.Equal(t, names(RepOrder(cs, len(cs))), names(RepOrder(cs, 0)), "rep 0 is the period's last repeat, no panic")
}

func TestRunIsolated(t *testing.T) {
	quickRaceExit(t)
	dir := t.TempDir()
	res, err := Run(context.Background(), Config{
		Contestants: testContestants()[:3], Goroutines: []int{2}, N: 300, Repeat: 1, TempDir: dir,
		Isolate: true, ChildArgs: []string{"-test.run=^$"},
	})
	require.NoError(t, err)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, left, "children's files removed")
	require.Empty(t, res.Failures)
	require.Len(t, res.Samples, 3)
	for _, s := range res.Samples {
		assert.True(t, s.Isolated)
		assert.True(t, s.Count.Verified())
		assert.Zero(t, s.Unaccounted)
		assert.Greater(t, s.PeakRSSBytes, int64(0))
	}
}

func TestRunFailuresAndValidation(t *testing.T) {
	bad := Contestant{Name: "bad", New: func(*os.File) (slog.Handler, func() error, error) { return nil, nil, errors.New("boom") }}
	res, err := Run(context.Background(), Config{Contestants: []Contestant{bad, contestant(t, "noop")}, Goroutines: []int{1}, N: 10, Repeat: 1, TempDir: t.TempDir()})
	require.NoError(t, err)
	require.Len(t, res.Failures, 1)
	assert.Contains(t, res.Failures[0], "bad, 1 goroutines, rep 1")
	assert.Len(t, res.Samples, 1)

	t.Run("isolated child failure", func(t *testing.T) {
		quickRaceExit(t)
		dir := t.TempDir()
		res, err := Run(context.Background(), Config{Contestants: []Contestant{{Name: "unknown-in-child", New: bad.New}},
			Goroutines: []int{1}, N: 10, Repeat: 1, TempDir: dir, Isolate: true, ChildArgs: []string{"-test.run=^$"}})
		require.NoError(t, err)
		left, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, left)
		require.Len(t, res.Failures, 1)
		assert.Contains(t, res.Failures[0], "unknown contestant")
	})

	ok := []Contestant{contestant(t, "noop")}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		cfg  Config
		want string
	}{
		{"no contestants", context.Background(), Config{Goroutines: []int{1}, N: 1, Repeat: 1}, "no contestants"},
		{"duplicate", context.Background(), Config{Contestants: append(ok, ok...), Goroutines: []int{1}, N: 1, Repeat: 1}, "duplicate"},
		{"empty name", context.Background(), Config{Contestants: []Contestant{{New: ok[0].New}}, Goroutines: []int{1}, N: 1, Repeat: 1}, "invalid contestant name"},
		{"no goroutines", context.Background(), Config{Contestants: ok, N: 1, Repeat: 1}, "no goroutine"},
		{"zero repeat", context.Background(), Config{Contestants: ok, Goroutines: []int{1}, N: 1}, "Repeat"},
		{"goroutines above N", context.Background(), Config{Contestants: ok, Goroutines: []int{4}, N: 2, Repeat: 1}, "goroutines"},
		{"cancelled", ctx, Config{Contestants: ok, Goroutines: []int{1}, N: 1, Repeat: 1}, "canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(tt.ctx, tt.cfg)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestServeChildErrors(t *testing.T) {
	tests := []struct {
		name, env, want string
	}{
		{"bad json", "{", "bad " + ChildEnv},
		{"unknown contestant", `{"contestant":"nope","goroutines":1,"n":1,"sample_every":1}`, "unknown contestant"},
		{"bad job", `{"contestant":"noop","goroutines":0,"n":1,"sample_every":1}`, "goroutines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(ChildEnv, tt.env)
			var out, errOut strings.Builder
			assert.Equal(t, 2, ServeChild(testContestants(), &out, &errOut))
			assert.Contains(t, errOut.String(), tt.want)
			assert.Empty(t, out.String())
		})
	}
	t.Run("ok", func(t *testing.T) {
		t.Setenv(ChildEnv, fmt.Sprintf(`{"contestant":"slog-json","goroutines":1,"n":5,"sample_every":1,"temp_dir":%q}`, t.TempDir()))
		var out, errOut strings.Builder
		require.Equal(t, 0, ServeChild(testContestants(), &out, &errOut), errOut.String())
		var s Sample
		require.NoError(t, json.Unmarshal([]byte(out.String()), &s))
		assert.Equal(t, int64(5), s.Count.Unique)
	})
}

// quickRaceExit stops race-enabled child processes from sleeping a second
// at exit (the race runtime's atexit_sleep_ms default), which would
// dominate the isolated runs' wall time.
func quickRaceExit(t *testing.T) {
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}
