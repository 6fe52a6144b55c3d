// Package reference is the benchmark reference record: the ~200-byte
// access-log line "request handled" that every asyncbus benchmark,
// comparison and encoder test of that workload logs. It is the one
// definition of the workload, shared by the library's own tests and
// benchmarks and by the benchmarks module (whose harness re-exports it);
// no library code imports it.
package reference

import (
	"log/slog"
	"time"
)

// Message is the reference record's message.
const Message = "request handled"

// Time is the fixed time of [Record].
var Time = time.Date(2024, 5, 17, 10, 30, 45, 123456789, time.UTC)

// Attrs returns the reference record's attributes: method, path, status,
// latency (a duration), bytes (int64), cache_hit and seq.
func Attrs(seq int) [7]slog.Attr {
	return [7]slog.Attr{
		slog.String("method", "GET"),
		slog.String("path", "/api/v1/users/12345/orders"),
		slog.Int("status", 200),
		slog.Duration("latency", 1500*time.Microsecond),
		slog.Int64("bytes", 5120),
		slog.Bool("cache_hit", true),
		slog.Int("seq", seq),
	}
}

// Record returns the reference record as a slog.Record with seq 42, at
// [Time], level Info and with no source PC.
func Record() slog.Record {
	r := slog.NewRecord(Time, slog.LevelInfo, Message, 0)
	a := Attrs(42)
	r.AddAttrs(a[:]...)
	return r
}
