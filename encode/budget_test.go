package encode

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twiceValuer resolves to a group that holds itself twice: 2^depth work
// without a budget, bounded only by maxDepth (4096).
type twiceValuer struct{ pad string }

func (t twiceValuer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("pad", t.pad), slog.Any("a", t), slog.Any("b", t))
}

// TestWorkBudgetPerRecord: A self-doubling LogValuer used
// to make Append run for minutes; the record's work is now bounded, the
// place where it ran out carries TruncatedValue, attributes before it are
// written and attributes after it are left out.
func TestWorkBudgetPerRecord(t *testing.T) {
	lowerBudget(t, 2000, 1<<20)
	identity := func(_ []string, a slog.Attr) slog.Attr { return a }
	for _, pad := range []string{""} {
		for _, f := range []Format{JSON, Text, Logfmt, Console} {
			for _, rep := range []func([]string, slog.Attr) slog.Attr{nil, identity} {
				e := New(Options{Format: f, ReplaceAttr: rep}).WithGroup("g")
				r := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{
					slog.String("before", "yes"), slog.Any("bomb", twiceValuer{pad}), slog.String("after", "no"),
				})
				line := string(e.Append(nil, r, nil))
				require.Equal(t, 1, strings.Count(line, TruncatedValue), "format %d", f)
				require.Contains(t, line, "before")
				require.NotContains(t, line, "after")
				require.True(t, strings.HasSuffix(line, "\n") && strings.Count(line, "\n") == 1)
				if f == JSON {
					require.True(t, json.Valid([]byte(line)), "still valid JSON")
				}

				// The same bomb in WithAttrs and in per-call extra attributes.
				line = string(New(Options{Format: f, ReplaceAttr: rep}).WithAttrs([]slog.Attr{slog.Any("bomb", twiceValuer{pad})}).Append(nil, record(fixedTime, slog.LevelInfo, "m", 0, nil), nil))
				require.Equal(t, 1, strings.Count(line, TruncatedValue), "WithAttrs, format %d", f)
				line = string(e.Append(nil, record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{slog.Int("n", 1)}), []slog.Attr{slog.Any("bomb", twiceValuer{pad}), slog.Int("x", 2)}))
				require.Equal(t, 1, strings.Count(line, TruncatedValue), "extra, format %d", f)
				require.NotContains(t, line, "x=2")
				if f == JSON {
					require.True(t, json.Valid([]byte(line)), "still valid JSON")
				}
			}
		}
	}
}

// TestWorkBudgetBytes: a self-doubling LogValuer with a 4 KiB string runs
// into the byte budget first.
func TestWorkBudgetBytes(t *testing.T) {
	lowerBudget(t, 1<<16, 1<<20)
	for _, f := range []Format{JSON, Text} {
		r := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{slog.Any("bomb", twiceValuer{strings.Repeat("x", 4<<10)}), slog.Int("after", 1)})
		line := New(Options{Format: f}).Append(nil, r, nil)
		require.Equal(t, 1, strings.Count(string(line), TruncatedValue))
		require.Greater(t, len(line), maxRecordBytes)
		require.Less(t, len(line), maxRecordBytes+(64<<10), "past the budget: one key and value, and closing braces")
		require.NotContains(t, string(line), "after")
		if f == JSON {
			require.True(t, json.Valid(line))
		}
	}
}

// TestWorkBudgetProduction: the production budget ends the self-doubling
// LogValuer too.
func TestWorkBudgetProduction(t *testing.T) {
	r := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{slog.Any("bomb", twiceValuer{}), slog.Int("after", 1)})
	line := New(Options{Format: JSON}).Append(nil, r, nil)
	require.Equal(t, 1, strings.Count(string(line), TruncatedValue))
	require.True(t, json.Valid(line))
}

// lowerBudget sets smaller work budgets for the duration of t, so that
// running into them is cheap.
func lowerBudget(t *testing.T, attrs, bytes int) {
	oldAttrs, oldBytes := maxRecordAttrs, maxRecordBytes
	maxRecordAttrs, maxRecordBytes = attrs, bytes
	t.Cleanup(func() { maxRecordAttrs, maxRecordBytes = oldAttrs, oldBytes })
}

// TestWorkBudgetLeavesBigRecordsAlone: a record well inside the budget (a
// wide group, a deep chain) is written in full.
func TestWorkBudgetLeavesBigRecordsAlone(t *testing.T) {
	wide := make([]any, 10000)
	for i := range wide {
		wide[i] = slog.Int("i", i)
	}
	r := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{slog.Group("wide", wide...), slog.Any("chain", chainValuer(50))})
	for _, f := range []Format{JSON, Text} {
		requireSame(t, reference(t, f, false, nil, nil, r), ours(f, false, nil, nil, r, true), "wide")
	}
}

// TestWorkBudgetEveryPath: the bound holds on every path, not
// only in the general code: scalar attributes on the fast paths (the
// record's, per-call extra ones, inside WithGroup), WithAttrs, group
// values, in every format, with UniqueKeys on and off. Before the fix a
// record of flat attributes, or one long string followed by others, was
// written whole on the fast paths and in the zap formats.
func TestWorkBudgetEveryPath(t *testing.T) {
	lowerBudget(t, 100, 4096)
	flat := make([]slog.Attr, 200)
	for i := range flat {
		flat[i] = slog.String("k"+strconv.Itoa(i), "v")
	}
	long := []slog.Attr{slog.String("long", strings.Repeat("x", 5000)), slog.Int("after", 1)}
	empty := record(fixedTime, slog.LevelInfo, "m", 0, nil)
	paths := []struct {
		name   string
		encode func(e *Encoder) []byte
	}{
		{"record attrs", func(e *Encoder) []byte { return e.Append(nil, record(fixedTime, slog.LevelInfo, "m", 0, flat), nil) }},
		{"record bytes", func(e *Encoder) []byte { return e.Append(nil, record(fixedTime, slog.LevelInfo, "m", 0, long), nil) }},
		{"WithGroup", func(e *Encoder) []byte {
			return e.WithGroup("g").Append(nil, record(fixedTime, slog.LevelInfo, "m", 0, flat), nil)
		}},
		{"extra attrs", func(e *Encoder) []byte { return e.Append(nil, empty, flat) }},
		{"extra bytes", func(e *Encoder) []byte { return e.Append(nil, empty, long) }},
		{"WithAttrs", func(e *Encoder) []byte { return e.WithAttrs(flat).Append(nil, empty, nil) }},
		{"WithAttrs bytes", func(e *Encoder) []byte { return e.WithAttrs(long).Append(nil, empty, nil) }},
		{"group value", func(e *Encoder) []byte {
			return e.Append(nil, record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{{Key: "g", Value: slog.GroupValue(flat...)}}), nil)
		}},
		{"self-doubling LogValuer", func(e *Encoder) []byte {
			return e.Append(nil, record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{slog.Any("bomb", twiceValuer{})}), nil)
		}},
	}
	for _, f := range []Format{JSON, Text, Logfmt, Console, ZapJSON, ZapConsole, GCPJSON, ECSJSON, DatadogJSON} {
		for _, unique := range []bool{false, true} {
			for _, p := range paths {
				t.Run(fmt.Sprintf("%v/unique=%v/%s", f, unique, p.name), func(t *testing.T) {
					line := p.encode(New(Options{Format: f, UniqueKeys: unique}))
					assert.Equal(t, 1, strings.Count(string(line), TruncatedValue), "%s", line)
					assert.NotContains(t, string(line), "k199", "the attributes past the budget are left out")
					assert.Less(t, len(line), 4096+6000, "at most one attribute past the byte budget")
					assert.True(t, strings.HasSuffix(string(line), "\n") && strings.Count(string(line), "\n") == 1)
					if f == JSON || f == ZapJSON || f.isPreset() {
						assert.True(t, json.Valid(line), "still valid JSON: %s", line)
					}
				})
			}
		}
	}
}
