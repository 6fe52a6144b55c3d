package encode

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSequenceKeys: with UniqueKeys and SequenceKeys, a top-level "seq" or
// "run" (an attribute, a group, a WithAttrs one) is written as seq_ or
// run_, merged as UniqueKeys merges with an attribute already under that
// key (the first position, the last value); nested keys (run.seq in
// Text), values and messages are untouched; without UniqueKeys or
// SequenceKeys nothing is renamed.
func TestSequenceKeys(t *testing.T) {
	attrs := []slog.Attr{
		slog.Int("seq", 3), slog.String("msg2", "seq=1 run=2"), slog.Group("run", slog.Int("seq", 4)),
		slog.String("k", `{"seq":1}`), slog.Int("seq_", 9),
	}
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"JSON", Options{Format: JSON, UniqueKeys: true, SequenceKeys: true},
			`{"run_":{"seq":4},"seq_":9,"msg2":"seq=1 run=2","k":"{\"seq\":1}"}`},
		{"Text", Options{Format: Text, UniqueKeys: true, SequenceKeys: true},
			`run_=w seq_=9 msg2="seq=1 run=2" run.seq=4 k="{\"seq\":1}"`},
		{"Logfmt", Options{Format: Logfmt, UniqueKeys: true, SequenceKeys: true},
			`run_=w seq_=9 msg2="seq=1 run=2" run.seq=4 k="{\"seq\":1}"`},
		{"ZapConsole", Options{Format: ZapConsole, UniqueKeys: true, SequenceKeys: true},
			`{"run_": {"seq": 4}, "seq_": 9, "msg2": "seq=1 run=2", "k": "{\"seq\":1}"}`},
		{"Console", Options{Format: Console, UniqueKeys: true, SequenceKeys: true},
			`run_=w seq_=9 msg2="seq=1 run=2" run.seq=4 k="{\"seq\":1}"`},
		{"JSON without SequenceKeys", Options{Format: JSON, UniqueKeys: true},
			`{"run":{"seq":4},"seq":3,"msg2":"seq=1 run=2","k":"{\"seq\":1}","seq_":9}`},
		{"JSON without UniqueKeys", Options{Format: JSON, SequenceKeys: true},
			`{"run":"w","seq":3,"msg2":"seq=1 run=2","run":{"seq":4}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			drop := func(groups []string, a slog.Attr) slog.Attr {
				if groups == nil && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
					return slog.Attr{}
				}
				return a
			}
			o := tc.opts
			if o.Format != ZapConsole && o.Format != Console {
				o.ReplaceAttr = drop
			}
			e := New(o).WithAttrs([]slog.Attr{slog.String("run", "w")})
			r := slog.NewRecord(fixedTime, slog.LevelInfo, "m", 0)
			r.AddAttrs(attrs...)
			got := string(e.Append(nil, r, nil))
			assert.Contains(t, got, tc.want)
		})
	}
}
