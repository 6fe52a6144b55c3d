package encode_test

import (
	"log/slog"
	"os"
	"time"

	"github.com/asyncbus/asyncbus/encode"
)

func Example() {
	at := time.Date(2024, 5, 17, 10, 30, 45, 123456789, time.UTC)
	r := slog.NewRecord(at, slog.LevelInfo, "request handled", 0)
	r.AddAttrs(slog.String("method", "GET"), slog.Int("status", 200), slog.Duration("latency", 1500*time.Microsecond))
	extra := []slog.Attr{slog.String("trace_id", "4bf92f35")}

	for _, f := range []encode.Format{encode.JSON, encode.Text, encode.Logfmt, encode.Console} {
		e := encode.New(encode.Options{Format: f}).Named("http").WithGroup("req")
		os.Stdout.Write(e.Append(nil, r, extra))
	}
	// Output:
	// {"time":"2024-05-17T10:30:45.123456789Z","level":"INFO","msg":"request handled","logger":"http","trace_id":"4bf92f35","req":{"method":"GET","status":200,"latency":1500000}}
	// time=2024-05-17T10:30:45.123Z level=INFO msg="request handled" logger=http trace_id=4bf92f35 req.method=GET req.status=200 req.latency=1.5ms
	// ts=2024-05-17T10:30:45.123Z level=info msg="request handled" logger=http trace_id=4bf92f35 req.method=GET req.status=200 req.latency=1.5ms
	// 10:30:45.123 INFO  request handled logger=http trace_id=4bf92f35 req.method=GET req.status=200 req.latency=1.5ms
}

func ExampleEncoder_AppendDropMarker() {
	e := encode.New(encode.Options{Format: encode.Logfmt})
	os.Stdout.Write(e.AppendDropMarker(nil, time.Date(2024, 5, 17, 10, 30, 45, 0, time.UTC), 128))
	// Output:
	// ts=2024-05-17T10:30:45.000Z level=warn msg="asyncbus: records dropped" dropped=128
}

// ExampleEncoder_AppendRecord encodes the Record a slog.Handler's Handle
// receives without copying it again, into a reused buffer.
func ExampleEncoder_AppendRecord() {
	e := encode.New(encode.Options{})
	buf := make([]byte, 0, 1024)
	for i := range 2 {
		r := slog.NewRecord(time.Date(2024, 5, 17, 10, 30, 45, 0, time.UTC), slog.LevelInfo, "tick", 0)
		r.AddAttrs(slog.Int("i", i))
		buf = e.AppendRecord(buf[:0], &r, nil)
		os.Stdout.Write(buf)
	}
	// Output:
	// {"time":"2024-05-17T10:30:45Z","level":"INFO","msg":"tick","i":0}
	// {"time":"2024-05-17T10:30:45Z","level":"INFO","msg":"tick","i":1}
}

// Example_cloudPresets writes one record with each cloud preset: the keys
// and level names Google Cloud Logging, Elastic (ECS) and Datadog read.
func Example_cloudPresets() {
	r := slog.NewRecord(time.Date(2024, 5, 17, 10, 30, 45, 0, time.UTC), slog.LevelWarn, "disk almost full", 0)
	r.AddAttrs(slog.Int("free_mb", 512))
	for _, f := range []encode.Format{encode.GCPJSON, encode.ECSJSON, encode.DatadogJSON} {
		e := encode.New(encode.Options{Format: f}).Named("storage")
		os.Stdout.Write(e.Append(nil, r, nil))
	}
	// Output:
	// {"time":"2024-05-17T10:30:45Z","severity":"WARNING","message":"disk almost full","logger":"storage","free_mb":512}
	// {"@timestamp":"2024-05-17T10:30:45Z","log.level":"warn","message":"disk almost full","ecs.version":"1.6.0","log.logger":"storage","free_mb":512}
	// {"timestamp":"2024-05-17T10:30:45Z","status":"warn","message":"disk almost full","logger.name":"storage","free_mb":512}
}

// ExampleOptions_uniqueKeys writes each key once: a repeated key keeps its
// first position and takes its last value, across WithAttrs and the
// record; in JSON groups of one key are merged.
func ExampleOptions_uniqueKeys() {
	r := slog.NewRecord(time.Time{}, slog.LevelInfo, "retry", 0)
	r.AddAttrs(slog.Int("attempt", 2), slog.Group("req", slog.Int("status", 503)))
	for _, f := range []encode.Format{encode.JSON, encode.Logfmt} {
		e := encode.New(encode.Options{Format: f, UniqueKeys: true}).
			WithAttrs([]slog.Attr{slog.Int("attempt", 1), slog.Group("req", slog.String("id", "r7"))})
		os.Stdout.Write(e.Append(nil, r, nil))
	}
	// Output:
	// {"level":"INFO","msg":"retry","attempt":2,"req":{"id":"r7","status":503}}
	// level=info msg=retry attempt=2 req.id=r7 req.status=503
}
