package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
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
func contestants(format string) ([]harness.Contestant, error) {
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
	bus := func(o asyncbus.Overflow) harness.Constructor {
		return func(f *os.File) (slog.Handler, func() error, error) {
			// The harness calls h.Close after the idle window.
			h := asyncbus.NewHandler(f, &asyncbus.Options{Format: af, Ring: asyncbus.RingOptions{Overflow: o}, Encoding: asyncbus.EncodingOptions{Color: asyncbus.ColorNever}})
			return h, h.Flush, nil
		}
	}
	return []harness.Contestant{
		{Name: nameBlock, New: bus(asyncbus.Block)},
		{Name: nameDrop, New: bus(asyncbus.Drop)},
		{Name: nameFile, New: func(f *os.File) (slog.Handler, func() error, error) {
			return slogNew(f), nil, nil
		}},
		{Name: nameBufio, New: func(f *os.File) (slog.Handler, func() error, error) {
			lw := harness.NewLockedBufio(f, bufioSize)
			return slogNew(lw), lw.Flush, nil
		}},
		{Name: nameNoop, Discards: true, New: harness.NewNoop},
	}, nil
}
