package encode

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFormatString(t *testing.T) {
	tests := []struct {
		f    Format
		want string
	}{
		{JSON, "JSON"},
		{Text, "Text"},
		{Logfmt, "Logfmt"},
		{Console, "Console"},
		{GCPJSON, "GCPJSON"},
		{ECSJSON, "ECSJSON"},
		{DatadogJSON, "DatadogJSON"},
		{ZapJSON, "ZapJSON"},
		{ZapConsole, "ZapConsole"},
		{ZapJSON.WithZapTime(ZapTimeNanos), "ZapJSON.WithZapTime(ZapTimeNanos)"},
		{ZapConsole.WithZapTime(ZapTimeEpoch).WithZapLevels(), "ZapConsole.WithZapTime(ZapTimeEpoch).WithZapLevels()"},
		{ZapJSON.WithZapLevels(), "ZapJSON.WithZapLevels()"},
		{Format(99), "Format(99)"},
		{Format(-1), "Format(-1)"},
		{ZapJSON | Format(ZapTimeNanos+1)<<zapTimeShift, "Format(1600)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, fmt.Sprintf("%v", tt.f))
		})
	}
}

func TestZapTimeString(t *testing.T) {
	tests := []struct {
		t    ZapTime
		want string
	}{
		{ZapTimeRFC3339, "ZapTimeRFC3339"},
		{ZapTimeRFC3339Nano, "ZapTimeRFC3339Nano"},
		{ZapTimeISO8601, "ZapTimeISO8601"},
		{ZapTimeEpoch, "ZapTimeEpoch"},
		{ZapTimeMillis, "ZapTimeMillis"},
		{ZapTimeNanos, "ZapTimeNanos"},
		{ZapTime(200), "ZapTime(200)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, fmt.Sprint(tt.t))
		})
	}
}
