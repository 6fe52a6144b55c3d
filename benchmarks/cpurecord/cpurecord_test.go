package cpurecord

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShapesAreWhatTheyName: through slog.JSONHandler, the short record
// has no attributes, both 1 KB shapes write the same line of about a
// kilobyte, and the With shape carries its four attributes and its group.
func TestShapesAreWhatTheyName(t *testing.T) {
	lines := map[string]string{}
	for _, s := range Shapes() {
		var buf bytes.Buffer
		l := s.Prepare(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime})))
		s.Log(context.Background(), l)
		lines[s.Name] = buf.String()
	}
	assert.Equal(t, `{"level":"INFO","msg":"connection accepted"}`+"\n", lines["short"])
	assert.Equal(t, lines["1kb-attrs"], lines["1kb-pairs"])
	assert.InDelta(t, 1024, len(lines["1kb-attrs"]), 256, "%s", lines["1kb-attrs"])
	for _, part := range []string{`"items":[{"SKU":"sku-0003"`, `"Added":"2024-05-17T10:39:45.123456789Z"}]`, `"tags":["checkout"`, `"counts":[3,1,4`, `"err":"inventory service: context deadline exceeded"`} {
		assert.Contains(t, lines["1kb-attrs"], part)
	}
	assert.Contains(t, lines["with"], `"service":"checkout","region":"eu-west-1","version":"1.4.2","instance":7,"request":{"method":"GET"`)
}

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// TestRunRatiosAreWithinARound: every cell gets one sample per round, the
// baseline's ratios are exactly 1, and the table lists every cell.
func TestRunRatiosAreWithinARound(t *testing.T) {
	var cs []Contestant
	for _, c := range Contestants() {
		if c.Name == Baseline || strings.HasPrefix(c.Name, "asyncbus-block") {
			cs = append(cs, c)
		}
	}
	res, err := Run(Config{Contestants: cs, Shapes: Shapes()[:1], Goroutines: []int{1, 2}, Rounds: 2, Scale: 0.01})
	require.NoError(t, err)
	require.Len(t, res.Cells, 4)
	for _, c := range res.Cells {
		require.Len(t, c.Samples, 2, "%s/%d/%s", c.Shape, c.Goroutines, c.Contestant)
		require.Len(t, c.Ratios, 2)
		if c.Contestant == Baseline {
			assert.Equal(t, []float64{1, 1}, c.Ratios)
		}
		for _, s := range c.Samples {
			assert.Positive(t, s.WallNS)
		}
	}
	md := res.Markdown()
	assert.Equal(t, 2+4, strings.Count(md, "\n"), md)
	assert.Contains(t, md, "| short | 2 | asyncbus-block |")
}

func TestRunNeedsTheBaseline(t *testing.T) {
	_, err := Run(Config{Contestants: Contestants()[1:2], Shapes: Shapes(), Goroutines: []int{1}, Rounds: 1})
	require.ErrorContains(t, err, Baseline)
}
