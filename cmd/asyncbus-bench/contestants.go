package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/internal/benchharness"
)

// The contestants' names, as the tables and -contestants show them.
const (
	nameBlock = "asyncbus-block"
	nameDrop  = "asyncbus-drop"
	nameFile  = "slog-file"
	nameBufio = "slog-bufio"
	nameNoop  = "noop"
)

// baselineName is the contestant the tables' ratio column divides by.
const baselineName = nameFile

// bufioSize is the slog-bufio contestant's buffer: 64 KiB, so that the
// baseline is not handicapped by bufio's 4 KiB default.
const bufioSize = 64 << 10

// mayDrop reports whether a contestant is allowed to lose records (it must
// still report them in drop markers).
func mayDrop(name string) bool { return name == nameDrop }

func contestantNames() []string {
	return []string{nameBlock, nameDrop, nameFile, nameBufio, nameNoop}
}

// contestants returns every contestant for the given -format. The slog
// contestants use slog.JSONHandler for json and slog.TextHandler for the
// other formats (the nearest standard handler).
func contestants(format string) ([]benchharness.Contestant, error) {
	var af asyncbus.Format
	slogNew := func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) }
	switch strings.ToLower(format) {
	case "json":
		af = asyncbus.JSON
		slogNew = func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) }
	case "text":
		af = asyncbus.Text
	case "logfmt":
		af = asyncbus.Logfmt
	case "console":
		af = asyncbus.Console
	default:
		return nil, fmt.Errorf("-format must be json, text, logfmt or console, got %q", format)
	}
	bus := func(o asyncbus.Overflow) benchharness.Constructor {
		return func(f *os.File) (slog.Handler, func() error, error) {
			// The harness calls h.Close after the idle window.
			h := asyncbus.NewHandler(f, &asyncbus.Options{Format: af, Overflow: o, Color: asyncbus.ColorNever})
			return h, h.Flush, nil
		}
	}
	return []benchharness.Contestant{
		{Name: nameBlock, New: bus(asyncbus.Block)},
		{Name: nameDrop, New: bus(asyncbus.Drop)},
		{Name: nameFile, New: func(f *os.File) (slog.Handler, func() error, error) {
			return slogNew(f), nil, nil
		}},
		{Name: nameBufio, New: func(f *os.File) (slog.Handler, func() error, error) {
			lw := &lockedWriter{bw: bufio.NewWriterSize(f, bufioSize)}
			return slogNew(lw), lw.Flush, nil
		}},
		{Name: nameNoop, Discards: true, New: func(*os.File) (slog.Handler, func() error, error) {
			return noopHandler{}, nil, nil
		}},
	}, nil
}

// lockedWriter guards a bufio.Writer, which is not safe for concurrent use.
// slog's handlers already serialise their Write calls, but the final Flush
// comes from another goroutine and must not race a Write; the mutex costs
// one uncontended lock per record on top of slog's own.
type lockedWriter struct {
	mu sync.Mutex
	bw *bufio.Writer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bw.Write(p)
}

// Flush writes the buffered bytes to the file.
func (w *lockedWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bw.Flush()
}

// noopHandler accepts every record and does nothing: the floor set by
// slog's own front end.
type noopHandler struct{}

func (noopHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (noopHandler) Handle(context.Context, slog.Record) error { return nil }
func (h noopHandler) WithAttrs([]slog.Attr) slog.Handler      { return h }
func (h noopHandler) WithGroup(string) slog.Handler           { return h }

// filterContestants keeps the contestants whose name contains one of the
// comma-separated parts of filter (case-insensitive); an empty filter
// keeps all.
func filterContestants(all []benchharness.Contestant, filter string) ([]benchharness.Contestant, error) {
	var parts []string
	for _, p := range strings.Split(filter, ",") {
		if p = strings.ToLower(strings.TrimSpace(p)); p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return all, nil
	}
	var out []benchharness.Contestant
	for _, c := range all {
		for _, p := range parts {
			if strings.Contains(strings.ToLower(c.Name), p) {
				out = append(out, c)
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-contestants %q matches none of %s", filter, strings.Join(contestantNames(), ", "))
	}
	return out, nil
}
