package harness

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
