package asyncbus_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// traceEncoder writes what the handler hands an Encoder, one line per
// record: its WithAttrs/WithGroup state, the logger name, the extra
// (Context) attributes and the record's own attributes.
type traceEncoder struct{ state string }

func (e traceEncoder) WithAttrs(attrs []slog.Attr) asyncbus.Encoder {
	e.state += fmt.Sprintf("attrs%v;", attrs)
	return e
}

func (e traceEncoder) WithGroup(name string) asyncbus.Encoder {
	e.state += "group[" + name + "];"
	return e
}

func (e traceEncoder) AppendRecord(dst []byte, _ context.Context, r slog.Record, name string, extra []slog.Attr) []byte {
	var own []string
	r.Attrs(func(a slog.Attr) bool {
		own = append(own, a.Key)
		return true
	})
	return fmt.Appendf(dst, "%s|%s|%s|%v|%s\n", r.Message, e.state, name, extra, strings.Join(own, ","))
}

// Every record of a handler opened with an Encoder goes through it, with
// the handler's state, name, Context fields and stack trace.
func TestOpenWithEncoderHandsTheRecordToTheEncoder(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *asyncbus.Options
		log  func(h *asyncbus.Handler)
		want string
	}{
		{"plain", nil, func(h *asyncbus.Handler) { slog.New(h).Info("m", "a", 1) }, "m|||[]|a\n"},
		{"state and name", nil, func(h *asyncbus.Handler) {
			slog.New(h.Named("db")).With("pool", 4).WithGroup("q").Info("m", "a", 1)
		}, "m|attrs[pool=4];group[q];|db|[]|a\n"},
		{"context fields", &asyncbus.Options{
			Features: asyncbus.FeatureOptions{Context: func(_ context.Context, w *asyncbus.FieldWriter) {
				w.AddString("req", "7f")
			}},
		}, func(h *asyncbus.Handler) { slog.New(h).Info("m") }, "m|||[req=7f]|\n"},
		{"stack trace last", &asyncbus.Options{Features: asyncbus.FeatureOptions{StackTraceLevel: slog.LevelError}}, func(h *asyncbus.Handler) {
			slog.New(h).Error("m", "a", 1)
		}, "m|||[]|a,stacktrace\n"},
		{"attribute path", nil, func(h *asyncbus.Handler) {
			_ = h.HandleAttrs(context.Background(), time.Time{}, slog.LevelInfo, "m", []slog.Attr{slog.Int("a", 1)})
		}, "m|||[]|a\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out lockedBuffer
			h, err := asyncbus.OpenWithEncoder(&out, traceEncoder{}, tc.opts)
			require.NoError(t, err)
			tc.log(h)
			require.NoError(t, h.Close())
			assert.Equal(t, tc.want, out.String())
		})
	}
}

func TestOpenWithEncoderRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		enc  asyncbus.Encoder
		opts *asyncbus.Options
		want string
	}{
		{"nil encoder", nil, nil, "nil Encoder"},
		{"flight recorder", traceEncoder{}, &asyncbus.Options{Features: asyncbus.FeatureOptions{FlightRecorder: &asyncbus.FlightRecorder{}}}, "FlightRecorder"},
		{"invalid option", traceEncoder{}, &asyncbus.Options{Ring: asyncbus.RingOptions{Capacity: -1}}, "Capacity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out lockedBuffer
			h, err := asyncbus.OpenWithEncoder(&out, tc.enc, tc.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Nil(t, h)
		})
	}
}
