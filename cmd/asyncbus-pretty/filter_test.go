package main

import (
	"strings"
	"testing"

	"github.com/asyncbus/asyncbus/encode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of filter.go, through the printer: which lines -level and -match
// keep.
func TestFilter(t *testing.T) {
	in := []string{
		`{"level":"debug","msg":"d","svc":"api"}`,
		`{"level":"warn","msg":"w","svc":"db","req":{"id":"7"}}`,
		`{"level":"error","msg":"e","svc":"api","logger":"http"}`,
		`{"msg":"no level","svc":"api"}`,
		`goroutine 1 [running]:`,
		`{"level":"WARN","msg":"asyncbus: records dropped","dropped":3}`,
		`{"level":"DEBUG","msg":"suppressed 2 similar records","svc":"api"}`,
	}
	warn, err := parseMinLevel("warn")
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		f       filter
		matches []string
		want    []int // indexes of in kept
	}{
		{"none", filter{}, nil, []int{0, 1, 2, 3, 4, 5, 6}},
		{"level", filter{minLevel: warn, hasLevel: true}, nil, []int{1, 2, 3, 4, 5}},
		{"match attribute", filter{}, []string{"svc=api"}, []int{0, 2, 3, 5, 6}},
		{"match nested", filter{}, []string{"req.id=7"}, []int{1, 5}},
		{"match logger", filter{}, []string{"logger=http"}, []int{2, 5}},
		{"match msg", filter{}, []string{"msg=w"}, []int{1, 5}},
		{"match level", filter{}, []string{"level=ERROR"}, []int{2, 5}},
		{"all must match", filter{}, []string{"svc=api", "logger=http"}, []int{2, 5}},
		{"level and match", filter{minLevel: warn, hasLevel: true}, []string{"svc=api"}, []int{2, 3, 5}},
		{"empty value", filter{}, []string{"svc="}, []int{5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			for _, m := range tc.matches {
				mt, err := parseMatch(m)
				require.NoError(t, err)
				f.matches = append(f.matches, mt)
			}
			p := newPrinter(false, true, f)
			var kept []int
			for i, line := range in {
				if out := p.appendLine(nil, []byte(line)); len(out) > 0 {
					kept = append(kept, i)
				}
			}
			assert.Equal(t, tc.want, kept)
		})
	}
}

func TestFilterFlags(t *testing.T) {
	_, err := parseMatch("novalue")
	assert.Error(t, err)
	_, err = parseMatch("=v")
	assert.Error(t, err)
	m, err := parseMatch("k=a=b")
	require.NoError(t, err)
	assert.Equal(t, match{"k", "a=b"}, m)
	_, err = parseMinLevel("loud")
	assert.Error(t, err)
	l, err := parseMinLevel("ERROR+2")
	require.NoError(t, err)
	assert.EqualValues(t, 10, l)
}

// TestFilterOwnFormats: -level keeps a line of every asyncbus format
// exactly when the level the line says is at or above it, and a drop
// marker whatever the level.
func TestFilterOwnFormats(t *testing.T) {
	for _, f := range ownFormats() {
		t.Run(f.name, func(t *testing.T) {
			drop := strings.TrimSuffix(string(encode.New(encode.Options{Format: f.f}).AppendDropMarker(nil, testTime, 5)), "\n")
			for _, min := range ownLevels {
				p := newPrinter(false, true, filter{minLevel: min, hasLevel: true})
				for _, l := range ownLevels {
					line := ownLine(f, l)
					shown := len(p.appendLine(nil, []byte(line))) > 0
					assert.Equal(t, f.level(l) >= min, shown, "-level %v, line %q", min, line)
				}
				assert.True(t, strings.HasPrefix(string(p.appendLine(nil, []byte(drop))), "[DROPPED 5] "), "-level %v, drop marker %q", min, drop)
			}
		})
	}
}

// TestFilterPeers: -level keeps each line the peers wrote (their levels:
// the parse tests) exactly when its level is at or above the minimum, and
// a line without a level always.
func TestFilterPeers(t *testing.T) {
	for name, line := range peerLines(t) {
		r := &record{}
		require.True(t, (&parser{}).parse(r, line), "%s: a record", name)
		for _, min := range ownLevels {
			p := newPrinter(false, true, filter{minLevel: min, hasLevel: true})
			shown := len(p.appendLine(nil, []byte(line))) > 0
			assert.Equal(t, !r.hasLevel || r.level >= min, shown, "%s at -level %v", name, min)
		}
	}
}
