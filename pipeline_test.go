package asyncbus

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContextHookAddsTopLevelFields(t *testing.T) {
	type key struct{}
	var sink memSink
	h := NewHandler(&sink, &Options{Features: FeatureOptions{Context: func(ctx context.Context, w *FieldWriter) {
		if id, ok := ctx.Value(key{}).(string); ok {
			w.AddBytes("trace_id", []byte(id))
			w.AddAttr(slog.Uint64("n", 42))
		}
	}}})
	l := slog.New(h).WithGroup("req")
	ctx := context.WithValue(context.Background(), key{}, "4bf92f3577b34da6a3ce929d0e0e4736")
	l.InfoContext(ctx, "traced", "k", "v")
	l.InfoContext(context.Background(), "untraced", "k", "v")
	require.NoError(t, h.Close())
	lines := sink.Lines()
	require.Len(t, lines, 2)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &m))
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", m["trace_id"], "top level, not inside the open group")
	assert.EqualValues(t, 42, m["n"])
	assert.Equal(t, map[string]any{"k": "v"}, m["req"])
	assert.NotContains(t, lines[1], "trace_id")
}

func TestHotPathAllocatesNothing(t *testing.T) {
	h := NewHandler(io.Discard, &Options{Features: FeatureOptions{Context: func(ctx context.Context, w *FieldWriter) {
		var id [32]byte
		copy(id[:], "4bf92f3577b34da6a3ce929d0e0e4736")
		w.AddBytes("trace_id", id[:])
	}}})
	defer h.Close()
	ctx := context.Background()
	r := recordAt(1)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = h.Handle(ctx, r) }), "Handle")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = h.Enabled(ctx, slog.LevelDebug) }), "Enabled")
	l := slog.New(h)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { l.Debug("disabled", "k", 1) }), "disabled call")
}

type resolveTo struct{ v slog.Value }

func (r resolveTo) LogValue() slog.Value { return r.v }

// TestHandleAttrsMatchesHandle: HandleAttrs writes exactly what Handle
// writes for a record with the same attributes, in every format, for root,
// named, derived and hooked handlers, with and without ReplaceAttr.
func TestHandleAttrsMatchesHandle(t *testing.T) {
	attrSets := map[string][]slog.Attr{
		"none":  nil,
		"seven": {slog.String("method", "GET"), slog.Int("status", 200), slog.Bool("ok", true), slog.Float64("f", 1.5), slog.Duration("d", time.Second), slog.Time("at", fixedTime), slog.Any("nil", nil)},
		"groups": {slog.Group("g", slog.Int("a", 1), slog.Group("h", slog.String("b", "x"))), slog.Group("empty"),
			slog.Group("", slog.String("inline", "y")), slog.Int("after", 2)},
		"valuers":     {slog.Any("lv", resolveTo{slog.GroupValue(slog.Int("x", 1))}), slog.Any("lv2", resolveTo{slog.StringValue("s")}), slog.String("odd key=\"q\"", "v\nw")},
		"empty-first": {slog.Group("e"), slog.String("k", "v")},
		// Groups that turn out empty leave nothing behind on either path
		// (audit 5, findings 3 and 8): an empty attr, and, with
		// ReplaceAttr, a group whose only member it drops.
		"group of an empty attr": {slog.Group("g", slog.Attr{}), slog.Int("a", 1)},
		"group emptied":          {slog.Group("req", slog.String("auth", "x")), slog.Int("status", 200)},
		"nested groups emptied":  {slog.Group("o", slog.Group("é", slog.Attr{}), slog.Group("req", slog.String("auth", "x")), slog.Int("x", 2)), slog.Int("y", 3)},
	}
	upper := func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == "status" || a.Key == "a" {
			a.Key = strings.ToUpper(a.Key)
		}
		if a.Key == "ok" || a.Key == "auth" {
			return slog.Attr{}
		}
		return a
	}
	type key struct{}
	hook := func(ctx context.Context, w *FieldWriter) {
		if id, ok := ctx.Value(key{}).(string); ok {
			w.AddBytes("trace_id", []byte(id))
		}
	}
	ctx := context.WithValue(context.Background(), key{}, "4bf92f3577b34da6a3ce929d0e0e4736")
	handlers := map[string]func(h *Handler) *Handler{
		"root":  func(h *Handler) *Handler { return h },
		"named": func(h *Handler) *Handler { return h.Named("db") },
		"derived": func(h *Handler) *Handler {
			return h.WithAttrs([]slog.Attr{slog.Int("w", 1)}).WithGroup("req").(*Handler)
		},
	}
	for _, format := range []Format{JSON, Text, Logfmt, Console, ZapJSON, ZapConsole} {
		for _, replace := range []bool{false, true} {
			for _, hooked := range []bool{false, true} {
				for hname, derive := range handlers {
					for sname, attrs := range attrSets {
						name := fmt.Sprintf("%v/replace=%v/hook=%v/%s/%s", format, replace, hooked, hname, sname)
						t.Run(name, func(t *testing.T) {
							opts := &Options{Format: format, Encoding: EncodingOptions{Color: ColorNever}}
							if replace {
								opts.ReplaceAttr = upper
							}
							if hooked {
								opts.Features.Context = hook
							}
							var viaRecord, viaAttrs memSink
							h1 := NewHandler(&viaRecord, opts)
							h2 := NewHandler(&viaAttrs, opts)
							r := slog.NewRecord(fixedTime, slog.LevelWarn, "msg here", 0)
							r.AddAttrs(attrs...)
							require.NoError(t, derive(h1).Handle(ctx, r))
							require.NoError(t, derive(h2).handleAttrs(ctx, fixedTime, slog.LevelWarn, "msg here", attrs))
							require.NoError(t, h1.Close())
							require.NoError(t, h2.Close())
							assert.Equal(t, viaRecord.String(), viaAttrs.String())
						})
					}
				}
			}
		}
	}
}

var handleAttrsCases = flag.Int("handleattrs.cases", 3000, "number of TestHandleAttrsMatchesHandleRandomized cases")

// TestHandleAttrsMatchesHandleRandomized: random attributes (groups that
// turn out empty, empty attrs and groups, inline groups, LogValuers of
// groups) through HandleAttrs and through Handle with the same record give
// the same bytes, for every format, ReplaceAttr, Context hook and handler
// kind. The seed is fixed, so a failure reproduces; -handleattrs.cases
// raises the count.
func TestHandleAttrsMatchesHandleRandomized(t *testing.T) {
	replacers := []func([]string, slog.Attr) slog.Attr{
		nil,
		func(gs []string, a slog.Attr) slog.Attr { // drops everything in groups
			if len(gs) > 0 {
				return slog.Attr{}
			}
			return a
		},
		func(_ []string, a slog.Attr) slog.Attr { // drops some keys anywhere
			if a.Key == "k" || a.Key == "" {
				return slog.Attr{}
			}
			return a
		},
		func(gs []string, a slog.Attr) slog.Attr { // strings become empty groups
			if a.Value.Kind() == slog.KindString {
				return slog.Group(a.Key)
			}
			a.Key = strings.Join(gs, "/") + ":" + a.Key
			return a
		},
	}
	hook := func(_ context.Context, w *FieldWriter) { w.AddString("trace_id", "t1") }
	type pair struct{ h1, h2 *Handler }
	type config struct {
		format  Format
		rep     int
		hooked  bool
		derived int // 0: root, 1: named, 2: WithAttrs and WithGroup
	}
	pairs := map[config]pair{}
	outputs := map[*Handler]*memSink{}
	get := func(c config) pair {
		if p, ok := pairs[c]; ok {
			return p
		}
		// Up to a few hundred handlers live at once: a 64 KiB ring each (the
		// records are small) keeps a 32-bit test process inside its 4 GiB.
		opts := &Options{Format: c.format, Encoding: EncodingOptions{Color: ColorNever}, ReplaceAttr: replacers[c.rep], Level: slog.LevelDebug, Ring: RingOptions{Capacity: 64 << 10}}
		if c.hooked {
			opts.Features.Context = hook
		}
		var p pair
		for _, h := range []**Handler{&p.h1, &p.h2} {
			var sink memSink
			*h = NewHandler(&sink, opts)
			outputs[*h] = &sink
		}
		pairs[c] = p
		return p
	}
	defer func() {
		for _, p := range pairs {
			require.NoError(t, p.h1.Close())
			require.NoError(t, p.h2.Close())
		}
	}()
	rng := rand.New(rand.NewPCG(5, 3))
	keys := []string{"a", "k", "", "g", "é", "a b", "x.y", "\xff"}
	var attr func(depth int) slog.Attr
	attrs := func(depth, max int) []slog.Attr {
		as := make([]slog.Attr, rng.IntN(max+1))
		for i := range as {
			as[i] = attr(depth)
		}
		return as
	}
	attr = func(depth int) slog.Attr {
		key := keys[rng.IntN(len(keys))]
		switch n := rng.IntN(12); {
		case n == 0:
			return slog.Attr{}
		case n == 1:
			return slog.Group(key) // empty
		case n <= 4 && depth < 3:
			as := attrs(depth+1, 3)
			return slog.Attr{Key: key, Value: slog.GroupValue(as...)}
		case n == 5 && depth < 3:
			return slog.Any(key, resolveTo{slog.GroupValue(attrs(depth+1, 2)...)})
		case n == 6:
			return slog.Any(key, resolveTo{slog.StringValue("lv")})
		case n == 7:
			return slog.Any(key, nil)
		case n == 8:
			return slog.String(key, "s v")
		}
		return slog.Int(key, rng.IntN(100))
	}
	formats := []Format{JSON, Text, Logfmt, Console, ZapJSON, ZapConsole}
	ctx := context.Background()
	for i := range *handleAttrsCases {
		c := config{format: formats[rng.IntN(len(formats))], rep: rng.IntN(len(replacers)), hooked: rng.IntN(3) == 0, derived: rng.IntN(5) / 2}
		p := get(c)
		as := attrs(0, 6)
		level := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn}[rng.IntN(3)]
		h1, h2 := p.h1, p.h2
		switch c.derived {
		case 1:
			h1, h2 = h1.Named("n"), h2.Named("n")
		case 2:
			derive := func(h *Handler) *Handler {
				return h.WithAttrs([]slog.Attr{slog.Group("w", slog.Attr{}), slog.Int("w", 1)}).WithGroup("req").(*Handler)
			}
			h1, h2 = derive(h1), derive(h2)
		}
		r := slog.NewRecord(fixedTime, level, "m", 0)
		r.AddAttrs(as...)
		require.NoError(t, h1.Handle(ctx, r))
		require.NoError(t, h2.handleAttrs(ctx, fixedTime, level, "m", as))
		require.NoError(t, p.h1.Flush())
		require.NoError(t, p.h2.Flush())
		viaRecord, viaAttrs := outputs[p.h1].take(), outputs[p.h2].take()
		require.NotEmpty(t, viaRecord)
		require.Equal(t, viaRecord, viaAttrs, "case %d, %+v, attrs %v", i, c, as)
		if c.format == JSON {
			require.True(t, json.Valid([]byte(viaRecord)), "case %d: %s", i, viaRecord)
		}
	}
}

func TestHandleAttrsAllocatesNothing(t *testing.T) {
	h := NewHandler(io.Discard, nil)
	defer h.Close()
	ctx := context.Background()
	attrs := []slog.Attr{slog.String("a", "1"), slog.Int("b", 2), slog.Bool("c", true), slog.String("d", "4"),
		slog.Int("e", 5), slog.String("f", "6"), slog.Int("g", 7)}
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = h.handleAttrs(ctx, fixedTime, slog.LevelInfo, "seven attrs", attrs)
	}))
}
