package encode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slogYearBug matches what slog's JSONHandler writes before Go 1.27 for a
// time outside years [0,9999]: its error string, then the time as a second
// string with no separator, which is not JSON. Go 1.27's slog writes the
// error string alone, and this encoder does so on every release.
var slogYearBug = regexp.MustCompile(`("` + regexp.QuoteMeta(errYear) + `")"[^"]*"`)

// slogTimeFixed is slog's JSON output as slog writes it without that bug:
// the second documented exception to byte parity, applied only on the
// releases whose slog has the bug.
func slogTimeFixed(out string) string {
	if !slogWritesTimeAfterYearError {
		return out
	}
	return slogYearBug.ReplaceAllString(out, "$1")
}

// TestSlogYearException checks that the exception applies exactly where
// slog writes invalid JSON for such a time, and that this encoder writes
// Go 1.27's valid form everywhere.
func TestSlogYearException(t *testing.T) {
	tests := []struct {
		name string
		tm   time.Time
	}{
		{"year 10000", time.Date(10000, 1, 1, 0, 0, 0, 5, time.UTC)},
		{"year 12000", time.Date(12000, 1, 2, 3, 4, 5, 0, time.UTC)},
		{"year -1", time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"year 9999 is in range", time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		{"year 0 is in range", time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := record(tt.tm, slog.LevelInfo, "m", 0, []slog.Attr{slog.Time("t", tt.tm)})
			slogJSON := slogOutput(t, JSON, false, nil, nil, r)
			inRange := tt.tm.Year() >= 0 && tt.tm.Year() <= 9999
			assert.Equal(t, inRange || !slogWritesTimeAfterYearError, json.Valid([]byte(slogJSON)), "slog's own JSON: %q", slogJSON)
			assert.Equal(t, !inRange && slogWritesTimeAfterYearError, slogYearBug.MatchString(slogJSON), "the exception applies: %q", slogJSON)
			got := ours(JSON, false, nil, nil, r, true)
			require.Equal(t, slogTimeFixed(slogJSON), got)
			require.True(t, json.Valid([]byte(got)), "%q", got)
			if !inRange {
				want := fmt.Sprintf(`{"time":"%s","level":"INFO","msg":"m","t":"%s"}`+"\n", errYear, errYear)
				require.Equal(t, want, got)
			}
		})
	}
}

// TestJSONFormatsStayValid: every format that writes JSON writes valid
// JSON for times outside RFC 3339's range and for invalid UTF-8, as the
// record time and as attributes, on the fast path and with ReplaceAttr.
func TestJSONFormatsStayValid(t *testing.T) {
	formats := []Format{JSON, GCPJSON, ECSJSON, DatadogJSON}
	for zt := ZapTimeRFC3339; zt <= ZapTimeNanos; zt++ {
		formats = append(formats, ZapJSON.WithZapTime(zt))
	}
	times := []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 5, time.UTC),
		time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("far", 100*3600)),
		time.Date(123456, 6, 7, 8, 9, 10, 11, time.FixedZone("near", -3600)),
	}
	identity := func(_ []string, a slog.Attr) slog.Attr { return a }
	for _, f := range formats {
		for _, tm := range times {
			for _, rep := range []func([]string, slog.Attr) slog.Attr{nil, identity} {
				name := fmt.Sprintf("format %#x/%v/rep %v", int(f), tm, rep != nil)
				t.Run(name, func(t *testing.T) {
					e := New(Options{Format: f, ReplaceAttr: rep, AddSource: true}).WithGroup("g\xff").WithAttrs([]slog.Attr{slog.Time("wt", tm)})
					r := record(tm, slog.LevelInfo, "m\xff\xe2\x82", callerPC(), []slog.Attr{
						slog.Time("t", tm), slog.String("k\xff", "v\xfe\u2028"), slog.Any("tp", &tm), slog.Group("h", slog.Time("t", tm)),
					})
					line := e.Append(nil, r, nil)
					require.True(t, json.Valid(bytes.TrimSuffix(line, []byte("\n"))), "%q", line)
				})
			}
		}
	}
}
