package encode

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// generalPath returns a copy of e that always takes the general (state.go)
// code path, for differential tests of the fast path.
func generalPath(e *Encoder) *Encoder {
	g := *e
	g.fast = fastNone
	return &g
}

func TestFastPathSelection(t *testing.T) {
	rep := func(_ []string, a slog.Attr) slog.Attr { return a }
	tests := []struct {
		opts Options
		want fastPath
	}{
		{Options{Format: JSON}, fastJSON},
		{Options{Format: Text, AddSource: true}, fastText},
		{Options{Format: Logfmt}, fastLogfmt},
		{Options{Format: Console}, fastNone},
		{Options{Format: JSON, ReplaceAttr: rep}, fastNone},
		{Options{Format: GCPJSON}, fastPresetJSON},
		{Options{Format: ECSJSON, AddSource: true}, fastPresetJSON},
		{Options{Format: DatadogJSON, ReplaceAttr: rep}, fastNone},
	}
	for _, tt := range tests {
		e := New(tt.opts)
		require.Equal(t, tt.want, e.fast, "%+v", tt.opts)
		d := e.Named("n").WithGroup("g").WithAttrs([]slog.Attr{slog.Int("a", 1)}).WithGroup("h")
		require.Equal(t, tt.want, d.fast, "derived %+v", tt.opts)
	}
}

// fastPathAttrs exercises every branch of the fast path with key and val.
func fastPathAttrs(key, val string, n int64, fl float64) []slog.Attr {
	return []slog.Attr{
		slog.String(key, val),
		slog.Int64(key, n),
		slog.Uint64(key, uint64(n)),
		slog.Float64(key, fl),
		slog.Bool(key, n&1 == 0),
		slog.Duration(key, time.Duration(n)),
		slog.Time(key, time.Unix(n%(1<<40), n%1e9).In(tzA)),
		slog.Group("", slog.String(key, val)),
		slog.Group(key),
		slog.Group(key, slog.Group("e")),
		slog.Group(key, slog.Attr{}), // writes nothing, but slog keeps its key prefix
		slog.Any(key, errors.New(val)),
		slog.String(val, key),
		{},
		slog.Int(key, 0),
	}
}

func fastPathChains(key, val string) map[string][]step {
	return map[string][]step{
		"none":    nil,
		"group":   {{group: key + "g"}},
		"g-attrs": {{group: "req"}, {attrs: []slog.Attr{slog.String(key, val)}}, {group: val + "x"}},
		"emptyg":  {{group: "g"}, {attrs: []slog.Attr{slog.Group("e", slog.Group("f"))}}},
	}
}

// checkFastPath compares the fast path with the general path (all formats
// with a fast path, the cloud presets included)
// and with log/slog (JSON and Text) for one set of inputs.
func checkFastPath(t *testing.T, msg, key, val string, n int64, fl float64) {
	attrs := fastPathAttrs(key, val, n, fl)
	extra := []slog.Attr{slog.String(val, key), slog.Group("x"), slog.Group(key, slog.Attr{}),
		slog.Group("xg", slog.String(key, val)), slog.Any(key, nil), slog.Int64(key, n)}
	for _, level := range []slog.Level{slog.Level(n % 30), slog.Level(n)} {
		r := record(fixedTime.In(tzB), level, msg, 0, attrs)
		for cn, chain := range fastPathChains(key, val) {
			for _, f := range []Format{JSON, Text, Logfmt, GCPJSON, ECSJSON, DatadogJSON} {
				for _, slogNames := range []bool{false, true} {
					e := New(Options{Format: f, SlogLevelNames: slogNames})
					for _, s := range chain {
						if s.group != "" {
							e = e.WithGroup(s.group)
						} else {
							e = e.WithAttrs(s.attrs)
						}
					}
					msgf := fmt.Sprintf("format=%d chain=%s slogNames=%v", f, cn, slogNames)
					got := string(e.Append(nil, r, nil))
					requireSame(t, string(generalPath(e).Append(nil, r, nil)), got, msgf)
					if (f == JSON || f == Text) && slogNames {
						requireSame(t, reference(t, f, false, nil, chain, r), got, msgf)
					}
					named := e.Named(key)
					requireSame(t, string(generalPath(named).Append(nil, r, extra)), string(named.Append(nil, r, extra)), msgf+" named+extra")
				}
			}
		}
	}
}

func TestFastPathMatchesGeneral(t *testing.T) {
	tests := []struct {
		msg, key, val string
		n             int64
		fl            float64
	}{
		{"request handled", "method", "GET", 200, 1.5},
		{"", "", "", 0, 0},
		{"a=b", "k=v", "x y", -1, math.NaN()},
		{"quote\"d", "ke\"y", "va\\l", math.MinInt64, math.Inf(1)},
		{"tab\tnl\n", "\x7fdel", "\x00\x1f", math.MaxInt64, math.Inf(-1)},
		{"é ü", "ключ", "значение", 1e9, 1e21},
		{"\xff\xfe", "k\xff", "\u2028\u2029", 1e18, 1e-7},
		{"<html>&", "a.b", "12345678", 12345678, math.Copysign(0, -1)},
		{strings.Repeat("x", 17), strings.Repeat("k", 9), strings.Repeat("v ", 9), 99, 123456.789},
		{"ok", "seven77", "eight888", 10000, 100},
	}
	for _, tt := range tests {
		checkFastPath(t, tt.msg, tt.key, tt.val, tt.n, tt.fl)
	}
}

func FuzzFastPath(f *testing.F) {
	f.Add("request handled", "method", "GET", int64(200), 1.5)
	f.Add("", "", "", int64(0), math.NaN())
	f.Add("a=b \"c\"", "k =\"\x7f", "\xff\xfe\u2028 \\", int64(math.MinInt64), math.Inf(-1))
	f.Fuzz(func(t *testing.T, msg, key, val string, n int64, fl float64) {
		checkFastPath(t, msg, key, val, n, fl)
	})
}

func TestWordClassClean(t *testing.T) {
	classes := []struct {
		name  string
		w     *wordClass
		plain func(c byte) bool
	}{
		{"json", &wcJSON, func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }},
		{"text", &wcText, func(c byte) bool { return c > 0x20 && c < 0x80 && c != '"' && c != '=' }},
		{"key", &wcKey, func(c byte) bool { return c > 0x20 && c < 0x7f && c != '"' && c != '=' }},
		{"quote", &wcQuote, func(c byte) bool { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' }},
	}
	for _, cl := range classes {
		for n := 0; n <= 17; n++ {
			require.True(t, cl.w.clean(strings.Repeat("a", n)), "%s len %d", cl.name, n)
			for pos := 0; pos < n; pos++ {
				for c := 0; c < 256; c++ {
					b := []byte(strings.Repeat("a", n))
					b[pos] = byte(c)
					require.Equal(t, cl.plain(byte(c)), cl.w.clean(string(b)), "%s len %d byte %#x at %d", cl.name, n, c, pos)
				}
			}
		}
	}
	// The per-class wrappers are the same predicates.
	for _, s := range []string{"", "abc", "a b", "a=b", `a"b`, `a\b`, "a\x7fb", "é", "a\tb"} {
		require.Equal(t, wcJSON.clean(s), jsonClean(s), "%q", s)
		require.Equal(t, wcText.clean(s), textClean(s), "%q", s)
		require.Equal(t, wcKey.clean(s), logfmtKeyClean(s), "%q", s)
		require.Equal(t, wcQuote.clean(s), quoteClean(s), "%q", s)
	}
}

func TestAppendIntegers(t *testing.T) {
	vals := []int64{0, 1, 9, 10, 42, 99, 100, 101, 999, 1000, 5120, 9999, 10000, 10001, 99999, 1500000,
		math.MaxInt64, math.MinInt64, -1, -9, -10, -99, -100, -9999, -10000, 1e18, -1e18}
	for i := int64(1); i < 1e18; i *= 7 {
		vals = append(vals, i, -i, i-1, i+1)
	}
	for _, v := range vals {
		require.Equal(t, strconv.FormatInt(v, 10), string(appendInt([]byte("x"), v))[1:], "%d", v)
		require.Equal(t, strconv.FormatUint(uint64(v), 10), string(appendUint(nil, uint64(v))), "%d", uint64(v))
	}
}

// TestAppendUintSpare checks appendUint on every number below 10^6, and
// around every power of ten up to 10^9, into buffers with every amount of
// spare capacity from 0 to 9, keeping the prefix intact.
func TestAppendUintSpare(t *testing.T) {
	check := func(u uint64, spare int) {
		b := append(make([]byte, 0, 3+spare), "abc"...)
		got := appendUint(b, u)
		if string(got) != "abc"+strconv.FormatUint(u, 10) {
			require.Equal(t, "abc"+strconv.FormatUint(u, 10), string(got), "%d, spare %d", u, spare)
		}
	}
	for u := range uint64(1e6) {
		check(u, 9)
	}
	for p := uint64(1); p <= 1e9; p *= 10 {
		for _, u := range []uint64{p - 1, p, p + 1, 2*p - 1, 5 * p, 9*p + p - 1} {
			for spare := range 10 {
				check(u, spare)
			}
		}
	}
}

func TestAppendNanos(t *testing.T) {
	for _, ns := range []int{0, 1, 9, 10, 100, 1000, 123456789, 120000000, 100000000, 999999999, 500, 10203, 5} {
		tm := time.Date(2024, 1, 2, 3, 4, 5, ns, time.UTC)
		want := strings.TrimSuffix(strings.TrimPrefix(tm.Format(time.RFC3339Nano), "2024-01-02T03:04:05"), "Z")
		require.Equal(t, want, string(appendNanos(nil, ns)), "%d", ns)
	}
}
