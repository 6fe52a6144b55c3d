package encode

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The 1 KB record of real attributes: a struct, a slice of ten structs
// each with a time.Time, a []string, a []int, a time and an error.
type benchUser struct {
	ID      int64     `json:"id"`
	Name    string    `json:"name"`
	Email   string    `json:"email,omitempty"`
	Roles   []string  `json:"roles"`
	Created time.Time `json:"created"`
	Active  bool      `json:"active"`
}

type benchItem struct {
	SKU   string    `json:"sku"`
	Qty   int       `json:"qty"`
	Price float64   `json:"price"`
	At    time.Time `json:"at"`
}

func benchRecordArgs() (msg string, attrs []slog.Attr) {
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)
	user := benchUser{ID: 4242, Name: "Ada Lovelace", Email: "ada@example.com", Roles: []string{"admin", "dev"}, Created: t0, Active: true}
	items := make([]benchItem, 10)
	for i := range items {
		items[i] = benchItem{SKU: "SKU-00" + string(rune('0'+i)), Qty: i + 1, Price: 9.99 * float64(i+1), At: t0.Add(time.Duration(i) * time.Second)}
	}
	return "order placed", []slog.Attr{
		slog.Any("user", user),
		slog.Any("items", items),
		slog.Any("tags", []string{"checkout", "web", "eu-west-1", "canary"}),
		slog.Any("ids", []int{101, 202, 303, 404, 505, 606}),
		slog.Time("due", t0.Add(72*time.Hour)),
		slog.Any("err", errors.New("payment gateway: timeout after 3 retries")),
	}
}

// encodeHandler is a minimal slog.Handler around an Encoder, writing each
// record to w with one Write, as slog's handlers do.
type encodeHandler struct {
	e *Encoder
	w io.Writer
}

var benchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

func (h encodeHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h encodeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return encodeHandler{h.e.WithAttrs(as), h.w}
}
func (h encodeHandler) WithGroup(g string) slog.Handler { return encodeHandler{h.e.WithGroup(g), h.w} }
func (h encodeHandler) Handle(_ context.Context, r slog.Record) error {
	bp := benchBufs.Get().(*[]byte)
	*bp = h.e.Append((*bp)[:0], r, nil)
	_, err := h.w.Write(*bp)
	benchBufs.Put(bp)
	return err
}

// TestBenchRecordMatchesSlog checks that the benchmark's record is written
// as slog writes it, and is about 1 KB.
func TestBenchRecordMatchesSlog(t *testing.T) {
	msg, attrs := benchRecordArgs()
	r := record(fixedTime, slog.LevelInfo, msg, 0, attrs)
	got := string(New(Options{Format: JSON}).Append(nil, r, nil))
	require.Equal(t, slogOutput(t, JSON, false, nil, nil, r), got)
	require.InDelta(t, 1024, len(got), 200)
}

// BenchmarkAnyRecord compares the 1 KB record of real attributes through
// slog.Logger into io.Discard: slog's JSONHandler and this package's JSON,
// with LogAttrs and with key-value pairs. Each round runs the two
// handlers one after the other; compare with benchstat over -count runs.
func BenchmarkAnyRecord(b *testing.B) {
	msg, attrs := benchRecordArgs()
	kvs := make([]any, 0, 2*len(attrs))
	for _, a := range attrs {
		kvs = append(kvs, a.Key, a.Value.Any())
	}
	ctx := context.Background()
	handlers := []struct {
		name string
		h    slog.Handler
	}{
		{"slog", slog.NewJSONHandler(io.Discard, nil)},
		{"encode", encodeHandler{New(Options{Format: JSON}), io.Discard}},
	}
	for _, call := range []string{"LogAttrs", "KV"} {
		for _, h := range handlers {
			l := slog.New(h.h)
			b.Run(call+"/"+h.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if call == "KV" {
						l.Info(msg, kvs...)
					} else {
						l.LogAttrs(ctx, slog.LevelInfo, msg, attrs...)
					}
				}
			})
		}
	}
}

// BenchmarkAnyRecordRatio runs slog's JSONHandler and this package's JSON
// on the 1 KB record alternately, one record each per iteration, and
// reports the ratio of their times (encode/slog): both see the same
// machine load, which on a shared machine moves either time by tens of
// percent from one run to the next. The clock reads cost well under 1 %
// of a record.
func BenchmarkAnyRecordRatio(b *testing.B) {
	msg, attrs := benchRecordArgs()
	kvs := make([]any, 0, 2*len(attrs))
	for _, a := range attrs {
		kvs = append(kvs, a.Key, a.Value.Any())
	}
	ctx := context.Background()
	ref := slog.New(slog.NewJSONHandler(io.Discard, nil))
	ours := slog.New(encodeHandler{New(Options{Format: JSON}), io.Discard})
	for _, call := range []string{"LogAttrs", "KV"} {
		log := func(l *slog.Logger) {
			if call == "KV" {
				l.Info(msg, kvs...)
			} else {
				l.LogAttrs(ctx, slog.LevelInfo, msg, attrs...)
			}
		}
		b.Run(call, func(b *testing.B) {
			var slogT, oursT time.Duration
			for b.Loop() {
				t0 := time.Now()
				log(ref)
				t1 := time.Now()
				log(ours)
				oursT += time.Since(t1)
				slogT += t1.Sub(t0)
			}
			b.ReportMetric(float64(oursT)/float64(slogT), "ratio")
			b.ReportMetric(float64(slogT.Nanoseconds())/float64(b.N), "slog-ns/rec")
			b.ReportMetric(float64(oursT.Nanoseconds())/float64(b.N), "encode-ns/rec")
		})
	}
}
