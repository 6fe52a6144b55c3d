package reference

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecordIsTheAccessLogLine pins the workload: slog's JSON of Record is
// the ~200-byte line the benchmarks' figures are about.
func TestRecordIsTheAccessLogLine(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, slog.NewJSONHandler(&buf, nil).Handle(context.Background(), Record()))
	require.Equal(t, `{"time":"2024-05-17T10:30:45.123456789Z","level":"INFO","msg":"request handled",`+
		`"method":"GET","path":"/api/v1/users/12345/orders","status":200,"latency":1500000,`+
		`"bytes":5120,"cache_hit":true,"seq":42}`+"\n", buf.String())
}
