package asyncbus_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/asyncbus/asyncbus"
)

// lokiEncoder encodes each record as one line of a Loki-like push format:
// the level and logger name as labels, then the message and the attributes
// as key=value pairs. It is immutable: WithAttrs and WithGroup return
// copies, so AppendRecord may run on many goroutines at once.
type lokiEncoder struct {
	attrs  []byte // the WithAttrs attributes, encoded once
	prefix string // the open groups, "a.b."
}

func (e lokiEncoder) WithAttrs(attrs []slog.Attr) asyncbus.Encoder {
	e.attrs = appendLokiAttrs(bytes.Clone(e.attrs), e.prefix, attrs)
	return e
}

func (e lokiEncoder) WithGroup(name string) asyncbus.Encoder {
	e.prefix += name + "."
	return e
}

func (e lokiEncoder) AppendRecord(dst []byte, _ context.Context, r slog.Record, name string, extra []slog.Attr) []byte {
	dst = append(dst, `{level="`...)
	dst = append(dst, strings.ToLower(r.Level.String())...)
	if name != "" {
		dst = append(dst, `",logger="`...)
		dst = append(dst, name...)
	}
	dst = append(dst, `"} `...)
	dst = strconv.AppendQuote(dst, r.Message)
	dst = appendLokiAttrs(dst, "", extra)
	dst = append(dst, e.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		dst = appendLokiAttrs(dst, e.prefix, []slog.Attr{a})
		return true
	})
	return append(dst, '\n')
}

// appendLokiAttrs appends " key=value" for each of attrs, keys under prefix.
func appendLokiAttrs(dst []byte, prefix string, attrs []slog.Attr) []byte {
	for _, a := range attrs {
		v := a.Value.Resolve()
		if v.Kind() == slog.KindGroup {
			dst = appendLokiAttrs(dst, prefix+a.Key+".", v.Group())
			continue
		}
		dst = append(append(append(dst, ' '), prefix...), a.Key...)
		dst = strconv.AppendQuote(append(dst, '='), v.String())
	}
	return dst
}

// pushOutput is an output that takes whole batches (asyncbus.BatchWriter),
// as a client pushing to a log store would; here the store is a buffer.
// The handler never calls it twice at once.
type pushOutput struct {
	store bytes.Buffer
}

func (o *pushOutput) Write(p []byte) (int, error) {
	_, err := o.WriteBatch([][]byte{p})
	return len(p), err
}

func (o *pushOutput) WriteBatch(records [][]byte) (int, error) {
	for _, r := range records {
		o.store.Write(r) // the slices alias the ring: copy before returning
	}
	return len(records), nil
}

var _ asyncbus.BatchWriter = (*pushOutput)(nil)

// An output with its own encoding, written with the public API alone: an
// Encoder that turns records into the output's format on the caller's
// goroutine, and an output that receives them in batches from the drainer.
func ExampleOpenWithEncoder() {
	out := &pushOutput{}
	h, err := asyncbus.OpenWithEncoder(out, lokiEncoder{}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	log := slog.New(h.Named("db")).With("pool", 4)
	log.Info("connected", "host", "db1")
	log.WithGroup("query").Warn("slow", "ms", 250)
	if err := h.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Print(out.store.String())
	// Output:
	// {level="info",logger="db"} "connected" pool="4" host="db1"
	// {level="warn",logger="db"} "slow" pool="4" query.ms="250"
}
