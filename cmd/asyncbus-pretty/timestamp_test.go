package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestParseTime(t *testing.T) {
	want := utcTime("2026-12-01T12:34:56.789Z")
	for _, tc := range []struct {
		in     string
		quoted bool
		want   time.Time // zero: not a time
	}{
		{"2026-12-01T12:34:56.789Z", true, want},
		{"2026-12-01T12:34:56.789Z", false, want},
		{"2026-12-01T12:34:56.789000000Z", true, want},
		{"2026-12-01 12:34:56,789Z", true, want},
		{"2026-12-01T14:34:56.789+02:00", true, want},
		{"2026-12-01T14:34:56.789+0200", true, want},
		{"2026-12-01T10:34:56.789-02", true, want},
		{"2026-12-01T12:34:56Z", true, want.Truncate(time.Second)},
		{"1796128496.789", false, want},
		{"1796128496789", false, want},
		{"1796128496789.0", false, want},
		{"1796128496789000", false, want},
		{"1796128496789000000", false, want},
		{"1796128496", false, want.Truncate(time.Second)},
		{"1.796128496789e+09", false, want},
		{"2026-13-01T12:34:56Z", true, time.Time{}},
		{"2026-12-01T12:34:56.Z", true, time.Time{}},
		{"2026-12-01T12:34:56+2", true, time.Time{}},
		{"2026-12-01", true, time.Time{}},
		{"-5", false, time.Time{}},
		{"abc", false, time.Time{}},
		{"1e400", false, time.Time{}},
	} {
		p := &parser{utc: true}
		got, ok := p.parseTime(scalar{text: tc.in, quoted: tc.quoted})
		if tc.want.IsZero() {
			assert.False(t, ok, "%q", tc.in)
			continue
		}
		if assert.True(t, ok, "%q", tc.in) {
			assert.WithinDuration(t, tc.want, got, time.Microsecond, "%q", tc.in)
		}
	}
}

// TestParseTimeKeepsZone: without -utc a time shows in its own zone.
func TestParseTimeKeepsZone(t *testing.T) {
	p := &parser{}
	got, ok := p.parseTime(scalar{text: "2026-12-01T14:34:56.789+02:00", quoted: true})
	assert.True(t, ok)
	_, off := got.Zone()
	assert.Equal(t, 7200, off)
	assert.Equal(t, 14, got.Hour())
}
