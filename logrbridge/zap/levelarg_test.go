package zap

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// zapcoreLevel stands for zapcore.Level, which this module does not
// import: an int8 whose String method gives zap's names, and Level(n) for
// the others (the integration module passes the real type).
type zapcoreLevel int8

func (l zapcoreLevel) String() string {
	names := map[zapcoreLevel]string{-1: "debug", 0: "info", 1: "warn", 2: "error", 3: "dpanic", 4: "panic", 5: "fatal"}
	if n, ok := names[l]; ok {
		return n
	}
	return fmt.Sprintf("Level(%d)", int8(l))
}

type notALevel struct{}

func (notALevel) String() string { return "loud" }

func TestLevelerReadsZapLevels(t *testing.T) {
	lv := new(slog.LevelVar)
	for _, tc := range []struct {
		in   fmt.Stringer
		want slog.Level
	}{
		{slog.LevelWarn, slog.LevelWarn},
		{lv, slog.LevelInfo},
		{zapcoreLevel(-1), DebugLevel},
		{zapcoreLevel(0), InfoLevel},
		{zapcoreLevel(1), WarnLevel},
		{zapcoreLevel(2), ErrorLevel},
		{zapcoreLevel(3), DPanicLevel},
		{zapcoreLevel(4), PanicLevel},
		{zapcoreLevel(5), FatalLevel},
		{zapcoreLevel(-3), slog.Level(-3)},
		{zapcoreLevel(-127), slog.Level(-127)},
	} {
		t.Run(tc.in.String(), func(t *testing.T) {
			l, err := leveler(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, l.Level())
		})
	}
	_, err := leveler(notALevel{})
	require.EqualError(t, err, `logrbridge/zap: the level "loud" (a zap.notALevel) is neither a slog.Leveler nor a zap level; the default level is used`)
}

// TestLevelTakesZapcoreLevels: the scaffold forms Level(zapcore.DebugLevel)
// and StacktraceLevel(zapcore.PanicLevel) set what they say, and a value
// that is no level is reported and leaves the default.
func TestLevelTakesZapcoreLevels(t *testing.T) {
	var buf bytes.Buffer
	l, h := NewWithHandler(WriteTo(&buf), Level(zapcoreLevel(-3)), StacktraceLevel(zapcoreLevel(4)))
	assert.True(t, l.V(3).Enabled())
	assert.False(t, l.V(4).Enabled())
	l.Error(nil, "no stack below panic")
	require.NoError(t, h.Close())
	assert.NotContains(t, buf.String(), `"stacktrace"`)

	var reports []string
	buf.Reset()
	l, h = NewWithHandler(WriteTo(&buf), Level(notALevel{}), func(o *Options) {
		o.HandlerOptions = &asyncbus.Options{OnError: func(err error) { reports = append(reports, err.Error()) }}
	})
	assert.True(t, l.V(0).Enabled())
	assert.False(t, l.V(1).Enabled(), "the production default, Info")
	require.NoError(t, h.Close())
	require.Len(t, reports, 1)
	assert.True(t, strings.Contains(reports[0], `the level "loud"`), reports[0])
}
