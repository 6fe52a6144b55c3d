package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMeasureAndReport runs every contestant once, briefly, at 1 and 4
// goroutines: each writes every record (the diode aside), and the report
// has a row per contestant and count, the targets and the cost rows.
func TestMeasureAndReport(t *testing.T) {
	res, err := measure(t.TempDir(), 400, 1, []int{1, 4}, "")
	require.NoError(t, err)
	for _, name := range res.names {
		for _, g := range []int{1, 4} {
			ss := res.samples[key{name, g}]
			require.Len(t, ss, 1, "%s at %d", name, g)
			if name != "zerolog-diode" {
				assert.Zero(t, ss[0].lost, "%s at %d goroutines loses nothing", name, g)
			}
			assert.Positive(t, ss[0].rps)
		}
	}
	var out bytes.Buffer
	res.report(&out, 400, 1)
	report := out.String()
	assert.Equal(t, 2*len(res.names), strings.Count(report, "\n| 1 |")+strings.Count(report, "\n| 4 |"), report)
	assert.Contains(t, report, "zerolog + the writer, 4 goroutine(s):")
	assert.Contains(t, report, "zap + the writer, 4 goroutines:")
	assert.Contains(t, report, "| zerolog-logwriter (file) |")
	assert.Contains(t, report, "- ceiling, 4 goroutine(s): zap-discard")
	assert.Contains(t, report, "- ceiling, 1 goroutine(s): zerolog-discard")
}

func TestSelected(t *testing.T) {
	names := func(cs []contestant) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.name)
		}
		return out
	}
	assert.Equal(t, []string{"zap-file", "zap-buffered", "zap-logwriter", "stdlog-file", "stdlog-logwriter"}, names(selected(contestants(), "zap,stdlog")))
	assert.Len(t, selected(contestants(), ""), len(contestants()))
}
