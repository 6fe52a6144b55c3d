package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// report counts the calls over the threshold per tenth of the run and
// ranks the gaps between them.
func TestReport(t *testing.T) {
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Microsecond
	}
	for _, i := range []int{3, 22, 41, 60, 79, 80} { // gaps 19 four times, then 1
		lat[i] = 15 * time.Microsecond
	}
	got := report("x", lat, 10*time.Microsecond)
	assert.Equal(t, "x: 6 of 100 calls over 10µs (6.00 %); per tenth of the run: [1 0 1 0 1 0 1 1 1 0]\n"+
		"commonest gaps between slow calls (calls: times): 19: 4 1: 1\n", got)
}

// The command logs through a contestant and reports; bad flags exit 2.
func TestRun(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"-contestant", "asyncbus-block", "-n", "1000"}, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "asyncbus-block: ")
	assert.Contains(t, out.String(), " of 1000 calls over 10µs")
	assert.Equal(t, 2, run([]string{"-contestant", "nobody"}, &out, &errOut))
	assert.Equal(t, 2, run([]string{"-n", "5"}, &out, &errOut))
}
