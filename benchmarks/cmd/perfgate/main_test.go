package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBaselineCoversEveryWorkload(t *testing.T) {
	var base map[string]Baseline
	require.NoError(t, json.Unmarshal(baselineJSON, &base))
	for _, w := range workloads {
		b, ok := base[w.name]
		require.True(t, ok, "baseline.json lacks %s", w.name)
		assert.Greater(t, b.Ratio, 0.0, w.name)
	}
}

func TestGateFailsAboveTheLimit(t *testing.T) {
	// A slack of 0.001 puts the limit at a thousandth of the baseline's
	// ratio, which no measurement meets: every workload must fail.
	var out, errOut bytes.Buffer
	rc := run([]string{"-rounds", "1", "-records", "200", "-slack", "0.001"}, &out, &errOut)
	assert.Equal(t, 1, rc, errOut.String())
	for _, w := range workloads {
		assert.Contains(t, out.String(), w.name+" ")
	}
	assert.Contains(t, out.String(), "FAIL: more than")
	assert.Contains(t, out.String(), "-update")
}

func TestGatePassesUnderAGenerousLimit(t *testing.T) {
	// A slack of 1000 leaves only the allocation check: asyncbus must
	// allocate no more than the baseline's count per record.
	var out, errOut bytes.Buffer
	rc := run([]string{"-rounds", "1", "-records", "200", "-slack", "1000"}, &out, &errOut)
	assert.Equal(t, 0, rc, out.String()+errOut.String())
	assert.NotContains(t, out.String(), "FAIL")
}

func TestUpdateWritesAReadableBaseline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "baseline.json")
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"-rounds", "1", "-records", "200", "-update", path}, &out, &errOut), errOut.String())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var base map[string]Baseline
	require.NoError(t, json.Unmarshal(data, &base))
	assert.Len(t, base, len(workloads))
	for _, w := range workloads {
		assert.Greater(t, base[w.name].Ratio, 0.0, w.name)
	}
}

func TestBadFlagsAreRefused(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run([]string{"-rounds", "0"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "must be positive")
}
