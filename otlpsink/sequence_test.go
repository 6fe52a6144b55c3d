package otlpsink

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/encode"
)

// frameContent returns the LogRecord inside a framed record.
func frameContent(t *testing.T, f []byte) []byte {
	t.Helper()
	require.True(t, isFramed(f), "%x", f)
	_, n := protowire.ConsumeVarint(f[1:])
	return f[1+n:]
}

func TestAppendSequenceAttributesFirst(t *testing.T) {
	enc := newEncoder(false, "")
	run := strings.Repeat("ab", 8)
	for _, tc := range []struct {
		name string
		seq  uint64
		msg  string
	}{
		{"small", 1, "hello"},
		{"largest that fits", 1<<56 - 1, "hello"},
		{"length grows a byte", 1<<56 - 1, strings.Repeat("m", 60)}, // the LogRecord's length passes 127 with the attributes
		{"long record", 300, strings.Repeat("m", 20000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := slog.NewRecord(time.Unix(1, 0), slog.LevelInfo, tc.msg, 0)
			r.AddAttrs(slog.Int("k", 7))
			rec := enc.AppendRecord(nil, context.Background(), r, "", nil)
			head, skip := enc.AppendSequence(nil, rec, tc.seq, run)
			require.NotNil(t, head)
			assert.LessOrEqual(t, len(head)-skip, seqRoom, "fits the room")
			line := append(head, rec[skip:]...)
			got := decodeRecord(t, frameContent(t, line))
			want := decodeRecord(t, frameContent(t, rec))
			require.Len(t, got.Attrs, 3)
			assert.Equal(t, pbKV{Key: "asyncbus.seq", Value: i64(int64(tc.seq))}, got.Attrs[0])
			assert.Equal(t, pbKV{Key: "asyncbus.run", Value: str(run)}, got.Attrs[1])
			got.Attrs = got.Attrs[2:]
			assert.Equal(t, want, got, "the record is otherwise unchanged")
		})
	}
	t.Run("beyond 2^56 the head does not fit", func(t *testing.T) {
		rec := enc.AppendRecord(nil, context.Background(), slog.NewRecord(time.Time{}, slog.LevelInfo, "x", 0), "", nil)
		head, skip := enc.AppendSequence(nil, rec, 1<<63, run)
		assert.Greater(t, len(head)-skip, seqRoom, "the handler writes such a record without a number")
	})
	t.Run("foreign", func(t *testing.T) {
		head, skip := enc.AppendSequence(nil, []byte(`{"msg":"x"}`+"\n"), 1, run)
		assert.Nil(t, head)
		assert.Zero(t, skip)
	})
}

func TestAppendDropMarkerIsAWarnRecord(t *testing.T) {
	enc := newEncoder(false, "")
	at := time.Unix(5, 0)
	m := enc.AppendDropMarker(nil, at, 42)
	require.Equal(t, byte(markerTag), m[0])
	f, own := ownFrame(m)
	require.True(t, own)
	assert.False(t, isFramed(m), "the sink tells a marker from a user record")
	got := decodeRecord(t, frameContent(t, f))
	assert.Equal(t, pbRecord{Time: uint64(at.UnixNano()), Observed: uint64(at.UnixNano()), Severity: 13, SeverityText: "WARN",
		Body: str(encode.DropMessage), Attrs: []pbKV{{Key: "asyncbus.dropped", Value: i64(42)}}}, got)

	head, skip := enc.AppendSequence(nil, m, 9, "0123456789abcdef")
	line := append(head, m[skip:]...)
	require.Equal(t, byte(markerTag), line[0], "a numbered marker is still a marker")
	f, own = ownFrame(line)
	require.True(t, own)
	got = decodeRecord(t, frameContent(t, f))
	assert.Equal(t, []pbKV{{Key: "asyncbus.seq", Value: i64(9)}, {Key: "asyncbus.run", Value: str("0123456789abcdef")}, {Key: "asyncbus.dropped", Value: i64(42)}}, got.Attrs)
}

// seqAttrs returns a record's asyncbus.seq and asyncbus.run, which must be
// its first attributes, and its asyncbus.dropped (0 if none).
func seqAttrs(t *testing.T, r pbRecord) (seq int64, run string, dropped int64) {
	t.Helper()
	require.GreaterOrEqual(t, len(r.Attrs), 2, "%+v", r)
	require.Equal(t, "asyncbus.seq", r.Attrs[0].Key)
	require.Equal(t, "asyncbus.run", r.Attrs[1].Key)
	for _, a := range r.Attrs[2:] {
		if a.Key == "asyncbus.dropped" {
			dropped = a.Value.Int
		}
	}
	return r.Attrs[0].Value.Int, r.Attrs[1].Value.Str, dropped
}

func TestSequenceAttributesNumberRecordsInOrder(t *testing.T) {
	rc := newReceiver(t)
	h, err := NewHandler(testOptions(rc), &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}})
	require.NoError(t, err)
	l := slog.New(h)
	for i := range 50 {
		l.Info("hello", "i", i)
	}
	require.NoError(t, h.Close())
	run := h.Stats().RunID
	require.Len(t, run, 16)
	recs := rc.records()
	require.Len(t, recs, 50)
	for i, r := range recs {
		seq, gotRun, _ := seqAttrs(t, r)
		assert.EqualValues(t, i+1, seq)
		assert.Equal(t, run, gotRun)
		assert.Equal(t, []pbKV{{Key: "i", Value: i64(int64(i))}}, r.Attrs[2:])
		assert.Equal(t, str("hello"), r.Body)
	}
}

// TestSequenceKeysAreNeverRepeated: a record's own asyncbus.seq,
// asyncbus.run and asyncbus.dropped, as attributes, WithAttrs or a group,
// are sent as asyncbus.seq_, asyncbus.run_ and asyncbus.dropped_; nested
// ones keep their keys.
func TestSequenceKeysAreNeverRepeated(t *testing.T) {
	rc := newReceiver(t)
	h, err := NewHandler(testOptions(rc), &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}})
	require.NoError(t, err)
	slog.New(h).With("asyncbus.run", "mine").Info("hello", "asyncbus.seq", 5, "asyncbus.dropped", 3, slog.Group("g", "asyncbus.seq", 6))
	require.NoError(t, h.Close())
	recs := rc.records()
	require.Len(t, recs, 1)
	seq, run, _ := seqAttrs(t, recs[0])
	assert.EqualValues(t, 1, seq)
	assert.Equal(t, h.Stats().RunID, run)
	assert.Equal(t, []pbKV{
		{Key: "asyncbus.run_", Value: str("mine")},
		{Key: "asyncbus.seq_", Value: i64(5)},
		{Key: "asyncbus.dropped_", Value: i64(3)}, // no record passes for a drop marker
		{Key: "g", Value: pbValue{Kind: "kvlist", KV: []pbKV{{Key: "asyncbus.seq", Value: i64(6)}}}},
	}, recs[0].Attrs[2:])
}

// Drop mode with the first request held: the records that find the ring
// full are lost, and the marker at their gap is a LogRecord numbered with
// the first lost record's number, carrying the count.
func TestSequenceDropMarkerAccountsForTheGap(t *testing.T) {
	rc := newReceiver(t)
	block := make(chan struct{})
	rc.setAnswer(func(i int, _ http.ResponseWriter) bool {
		if i == 0 {
			<-block // hold the first batch so the ring fills
		}
		return true
	})
	s, err := NewSink(testOptions(rc))
	require.NoError(t, err)
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}, Ring: asyncbus.RingOptions{Overflow: asyncbus.Drop, Capacity: 4096}, Features: asyncbus.FeatureOptions{Sequence: true}})
	require.NoError(t, err)
	l := slog.New(h)
	logged := 0
	for h.Stats().Dropped < 5 {
		l.Info("fill", "i", logged)
		logged++
		require.Less(t, logged, 100000, "nothing was dropped")
	}
	close(block)
	l.Info("after")
	logged++
	require.NoError(t, h.Close())
	st := h.Stats()
	require.EqualValues(t, logged, st.Written+st.Dropped)

	next, markers, lost := int64(1), 0, int64(0)
	for _, r := range rc.records() {
		seq, run, dropped := seqAttrs(t, r)
		require.Equal(t, st.RunID, run)
		require.Equal(t, next, seq, "%+v", r)
		if dropped > 0 {
			assert.Equal(t, str(encode.DropMessage), r.Body)
			assert.Equal(t, "WARN", r.SeverityText)
			markers++
			lost += dropped
			next += dropped
			continue
		}
		next++
	}
	assert.EqualValues(t, logged+1, next, "every record's number is a record's or a marker's")
	assert.EqualValues(t, st.Dropped, lost)
	assert.EqualValues(t, st.DropMarkers, markers)
	assert.Positive(t, markers)
	assert.Zero(t, s.Stats().Foreign, "the markers are LogRecords of the encoder's own")
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
			enc, r := newEncoder(false, ""), referenceRecord()
			run := strings.Repeat("ab", 8)
			buf, scratch := make([]byte, 0, 1024), make([]byte, 0, 128)
			room := 0
			if on {
				room = seqRoom
			}
			seq := uint64(0)
			b.ReportAllocs()
			for b.Loop() {
				buf = enc.AppendRecord(buf[:room], spanContext(), r, "", nil)
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
				h, err := asyncbus.OpenWithEncoder(io.Discard, newEncoder(false, ""), &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: on}})
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
