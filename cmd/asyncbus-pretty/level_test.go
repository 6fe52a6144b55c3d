package main

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseLevel(t *testing.T) {
	for _, tc := range []struct {
		in        string
		bare      bool
		want      slog.Level
		exact, ok bool
	}{
		{"INFO", false, slog.LevelInfo, true, true},
		{"info", false, slog.LevelInfo, true, true},
		{"Warning", false, slog.LevelWarn, true, true},
		{"err", false, slog.LevelError, true, true},
		{"TRACE", false, levelTrace, true, true},
		{"fatal", false, levelFatal, true, true},
		{"DEBUG-4", false, slog.Level(-8), true, true},
		{"ERROR+4", false, slog.Level(12), true, true},
		{"info+2", false, slog.Level(2), true, true},
		{"Level(-2)", false, slog.Level(-2), true, true},
		{"LEVEL(5)", false, slog.Level(5), true, true},
		{"dpanic", false, slog.LevelError, false, true},
		{"panic", false, levelFatal, false, true},
		{"3", true, slog.Level(-3), true, true},
		{"3", false, 0, false, false},
		{"128", true, 0, false, false},
		{"notice", false, slog.Level(2), false, true},
		{"CRITICAL", false, levelFatal, true, true},
		{"ALERT", false, levelFatal, false, true},
		{"emergency", false, levelFatal, false, true},
		{"10", true, levelTrace, true, true},
		{"20", true, slog.LevelDebug, true, true},
		{"30", true, slog.LevelInfo, true, true},
		{"40", true, slog.LevelWarn, true, true},
		{"50", true, slog.LevelError, true, true},
		{"60", true, levelFatal, true, true},
		{"30", false, 0, false, false},
		{"70", true, slog.Level(-70), true, true},
		{"35", true, slog.Level(-35), true, true},
		{"verbose", false, 0, false, false},
		{"info+x", false, 0, false, false},
		{"panic+1", false, 0, false, false},
		{"", false, 0, false, false},
		{"Level(", false, 0, false, false},
	} {
		l, exact, ok := parseLevel(tc.in, tc.bare)
		assert.Equal(t, tc.ok, ok, "%q ok", tc.in)
		if ok {
			assert.Equal(t, tc.want, l, "%q", tc.in)
			assert.Equal(t, tc.exact, exact, "%q exact", tc.in)
		}
	}
}
