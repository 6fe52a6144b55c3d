package asyncbus

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus/encode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryValidFormatIsListed: each of the root's Format constants is
// accepted by Open and writes its own format, and every format that
// encode accepts (its low byte; the zap formats carry their time encoding
// above it) is one of them.
func TestEveryValidFormatIsListed(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		line   string
	}{
		{"JSON", JSON, `{"level":"INFO","msg":"m","k":1}`},
		{"Text", Text, `level=INFO msg=m k=1`},
		{"Logfmt", Logfmt, `level=info msg=m k=1`},
		{"Console", Console, `INFO  m k=1`},
		{"ZapJSON", ZapJSON, `{"level":"info","msg":"m","k":1}`},
		{"ZapConsole", ZapConsole, "INFO\tm\t{\"k\": 1}"},
		{"ZapJSON with a time encoding", ZapJSON.WithZapTime(encode.ZapTimeNanos), `{"level":"info","msg":"m","k":1}`},
		{"ZapConsole with a time encoding", ZapConsole.WithZapTime(encode.ZapTimeEpoch), "INFO\tm\t{\"k\": 1}"},
		{"GCPJSON", GCPJSON, `{"severity":"INFO","message":"m","k":1}`},
		{"ECSJSON", ECSJSON, `{"log.level":"info","message":"m","ecs.version":"1.6.0","k":1}`},
		{"DatadogJSON", DatadogJSON, `{"status":"info","message":"m","k":1}`},
	}
	listed := map[Format]bool{}
	for _, tt := range tests {
		listed[tt.format&0xff] = true
		t.Run(tt.name, func(t *testing.T) {
			assert.True(t, tt.format.Valid())
			var sink memSink
			h, err := Open(&sink, &Options{Format: tt.format, Encoding: EncodingOptions{Color: ColorNever}})
			require.NoError(t, err, "a valid format is accepted")
			// The zero time is left out by every format: the line is stable.
			require.NoError(t, h.handleAttrs(context.Background(), time.Time{}, slog.LevelInfo, "m", []slog.Attr{slog.Int("k", 1)}))
			require.NoError(t, h.Close())
			assert.Equal(t, tt.line+"\n", sink.String())
		})
	}
	for b := range Format(0x100) {
		if b.Valid() {
			assert.True(t, listed[b], "format %#x is valid but has no root constant", int(b))
		}
	}
}
