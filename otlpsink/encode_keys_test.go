package otlpsink

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKeysUniqueAndNeverEmpty: at every level a repeated key keeps its
// first position and its last value (across WithAttrs and the record too),
// and an attribute with an empty key is dropped.
func TestKeysUniqueAndNeverEmpty(t *testing.T) {
	top := newEncoder(false, "")
	var many []slog.Attr // more than smallList: the sorting path
	var manyWant []pbKV
	for i := range 64 {
		many = append(many, slog.Int(fmt.Sprintf("k%02d", i%40), i))
	}
	for i := range 40 {
		last := i
		if i < 64-40 {
			last = i + 40
		}
		manyWant = append(manyWant, pbKV{fmt.Sprintf("k%02d", i), i64(int64(last))})
	}
	cases := []struct {
		name  string
		attrs []slog.Attr
		with  []slog.Attr
		group string
		want  []pbKV
	}{
		{name: "top level", attrs: []slog.Attr{slog.Int("dup", 1), slog.Int("x", 0), slog.Int("dup", 2)}, want: []pbKV{{"dup", i64(2)}, {"x", i64(0)}}},
		{name: "across WithAttrs and the record", with: []slog.Attr{slog.Int("dup", 1), slog.Int("w", 0)}, attrs: []slog.Attr{slog.Int("dup", 2)},
			want: []pbKV{{"dup", i64(2)}, {"w", i64(0)}}},
		{name: "in a WithGroup level", with: []slog.Attr{slog.Int("dup", 1)}, group: "g", attrs: []slog.Attr{slog.Int("dup", 2), slog.Int("dup", 3)},
			want: []pbKV{{"dup", i64(1)}, {"g", kvl(pbKV{"dup", i64(3)})}}},
		{name: "in a group value", attrs: []slog.Attr{slog.Group("g", slog.Int("a", 1), slog.Int("a", 2))}, want: []pbKV{{"g", kvl(pbKV{"a", i64(2)})}}},
		{name: "group replaced by a scalar", attrs: []slog.Attr{slog.Group("g", slog.Int("a", 1)), slog.Int("g", 5)}, want: []pbKV{{"g", i64(5)}}},
		{name: "inlined group's keys", attrs: []slog.Attr{slog.Int("a", 1), slog.Group("", slog.Int("a", 2))}, want: []pbKV{{"a", i64(2)}}},
		{name: "empty keys dropped", attrs: []slog.Attr{slog.Int("", 5), slog.Group("g", slog.String("", "x"), slog.Int("k", 1)), slog.Any("m", map[string]int{"": 1})},
			want: []pbKV{{"g", kvl(pbKV{"k", i64(1)})}, {"m", pbValue{Kind: "kvlist", KV: []pbKV{}}}}},
		{name: "group of empty keys dropped", attrs: []slog.Attr{slog.Group("g", slog.Int("", 1))}, want: nil},
		{name: "many keys", attrs: many, want: manyWant},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enc := top.WithAttrs(tc.with)
			if tc.group != "" {
				enc = enc.WithGroup(tc.group)
			}
			assert.Equal(t, tc.want, encodeAttrs(t, enc, tc.attrs...))
		})
	}
}

// TestUniqueKeysAllocatesNothing: removing repeated keys, short lists and
// long, takes no allocation once the buffer has room.
func TestUniqueKeysAllocatesNothing(t *testing.T) {
	enc := newEncoder(false, "").WithAttrs([]slog.Attr{slog.String("dup", "a"), slog.Any("err", errors.New("x"))}).WithGroup("g")
	r := referenceRecord()
	r.AddAttrs(slog.String("method", "POST"))
	for i := range 64 {
		r.AddAttrs(slog.Int(fmt.Sprintf("k%d", i%40), i))
	}
	buf := make([]byte, 0, 1<<16)
	ctx := spanContext()
	extra := []slog.Attr{slog.String("dup", "b")}
	allocs := testing.AllocsPerRun(100, func() {
		buf = enc.AppendRecord(buf[:0], ctx, r, "", extra)
	})
	assert.Zero(t, allocs)
}
