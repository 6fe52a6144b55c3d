package journald

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

func TestAppendSequenceFieldsFirst(t *testing.T) {
	enc := newEncoder("app", false, "", nil)
	run := strings.Repeat("ab", 8)
	for _, tc := range []struct {
		name string
		seq  uint64
	}{{"first", 1}, {"largest", math.MaxUint64}} {
		t.Run(tc.name, func(t *testing.T) {
			rec, _ := encodeEntry(t, enc, record(0, "hello"), "")
			rec = append([]byte{recordTag}, rec...)
			head, skip := enc.AppendSequence(nil, rec, tc.seq, run)
			require.Equal(t, 1, skip, "the head replaces the tag")
			assert.LessOrEqual(t, len(head)-skip, seqRoom)
			line := append(head, rec[skip:]...)
			require.Equal(t, byte(recordTag), line[0])
			fs, err := parseEntry(line[1:])
			require.NoError(t, err)
			assert.Equal(t, []field{
				{Name: "ASYNCBUS_SEQ", Value: strconv.FormatUint(tc.seq, 10)},
				{Name: "ASYNCBUS_RUN", Value: run},
				{Name: "PRIORITY", Value: "6"},
				{Name: "MESSAGE", Value: "hello"},
				{Name: "SYSLOG_IDENTIFIER", Value: "app"},
			}, fs)
		})
	}
	t.Run("room", func(t *testing.T) {
		head, skip := enc.AppendSequence(nil, []byte{recordTag}, math.MaxUint64, run)
		assert.Equal(t, seqRoom, len(head)-skip, "the largest number fills the room exactly")
	})
	t.Run("foreign", func(t *testing.T) {
		head, skip := enc.AppendSequence(nil, []byte(`{"msg":"asyncbus: records dropped"}`+"\n"), 1, run)
		assert.Nil(t, head)
		assert.Zero(t, skip)
	})
}

func TestAppendDropMarkerCarriesTheCount(t *testing.T) {
	replaced := false
	enc := newEncoder("app", false, "", func(_ []string, a slog.Attr) slog.Attr { replaced = true; return a })
	m := enc.AppendDropMarker(nil, time.Now(), 42)
	require.Equal(t, byte(recordTag), m[0])
	fs, err := parseEntry(m[1:])
	require.NoError(t, err)
	assert.Equal(t, []field{
		{Name: "PRIORITY", Value: "4"},
		{Name: "MESSAGE", Value: "asyncbus: records dropped"},
		{Name: "SYSLOG_IDENTIFIER", Value: "app"},
		{Name: "ASYNCBUS_DROPPED", Value: "42"},
	}, fs)
	assert.False(t, replaced, "ReplaceAttr does not see the marker's count")
}

// seqRoom is the handler's room in front of every record (see asyncbus.Encoder).
const seqRoom = 64

// BenchmarkEncodeSequence is asyncbus.Options.Features.Sequence's cost in
// this encoding, per record: the record encoded (the caller's part) and,
// with the numbers, AppendSequence's head written over the room in front
// of it (the writer's part), as the handler and its bus do it.
func BenchmarkEncodeSequence(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("seq=%v", on), func(b *testing.B) {
			enc, r := newEncoder("app", false, "", nil), benchRecord()
			run := strings.Repeat("ab", 8)
			buf, scratch := make([]byte, 0, 1024), make([]byte, 0, 128)
			room := 0
			if on {
				room = seqRoom
			}
			seq := uint64(0)
			b.ReportAllocs()
			for b.Loop() {
				buf = enc.AppendRecord(buf[:room], context.Background(), r, "", nil)
				if on {
					seq++
					head, skip := enc.AppendSequence(scratch[:0], buf[room:], seq, run)
					copy(buf[room+skip-len(head):], head)
				}
			}
		})
	}
}

// BenchmarkHandlerSequence is the same cost through a handler, from 1
// goroutine and from 4, into io.Discard (the caller's encoding, the ring,
// the writer's numbering; not the socket or the network).
func BenchmarkHandlerSequence(b *testing.B) {
	for _, on := range []bool{false, true} {
		for _, g := range []int{1, 4} {
			b.Run(fmt.Sprintf("seq=%v/goroutines=%d", on, g), func(b *testing.B) {
				h, err := asyncbus.OpenWithEncoder(io.Discard, newEncoder("app", false, "", nil), &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: on}})
				require.NoError(b, err)
				defer h.Close()
				l := slog.New(h)
				ctx := context.Background()
				b.ReportAllocs()
				if g == 1 {
					for b.Loop() {
						l.LogAttrs(ctx, slog.LevelInfo, "request handled", slog.String("method", "GET"), slog.Int("status", 200))
					}
					return
				}
				b.SetParallelism(max(1, g/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						l.LogAttrs(ctx, slog.LevelInfo, "request handled", slog.String("method", "GET"), slog.Int("status", 200))
					}
				})
			})
		}
	}
}

// benchRecord is BenchmarkAppendRecord's record.
func benchRecord() slog.Record {
	return record(slog.LevelInfo, "request handled", slog.String("method", "GET"),
		slog.String("path", "/api/v1/users/12345/orders"), slog.Int("status", 200),
		slog.Duration("latency", 1500*time.Microsecond), slog.Int64("bytes", 5120), slog.Bool("cache_hit", true))
}
