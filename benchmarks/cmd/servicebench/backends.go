package main

import (
	"fmt"
	"log/slog"
	"os"

	plog "github.com/phuslu/log"
	"github.com/rs/zerolog"

	"github.com/asyncbus/asyncbus/benchmarks/contestants"
)

// Back ends of this benchmark besides the contestants: the contestants'
// phuslu-async writes through a FileWriter of its own (not to a pipe),
// and zerolog-diode is lossy by design.
const (
	// phusluPipe is phuslu/log's AsyncWriter over the output itself
	// (IOWriter), with the contestants' channel size: lossless, blocking
	// when its channel is full.
	phusluPipe = "phuslu-async"
	// zerologSync is zerolog's slog handler writing each record to the
	// output on the caller: lossless, blocking.
	zerologSync = "zerolog"
)

// newBackend builds the handler called name on f and the function that
// writes what it holds (nil if it holds nothing).
func newBackend(name string, f *os.File) (slog.Handler, func() error, error) {
	switch name {
	case phusluPipe:
		aw := &plog.AsyncWriter{Writer: plog.IOWriter{Writer: f}, ChannelSize: contestants.PhusluChannelSize}
		logger := &plog.Logger{Level: plog.InfoLevel, Writer: aw}
		return logger.Slog().Handler(), aw.Close, nil
	case zerologSync:
		return zerolog.NewSlogHandler(zerolog.New(f).Level(zerolog.InfoLevel)), nil, nil
	}
	c, ok := contestants.ByName(name)
	if !ok {
		return nil, nil, fmt.Errorf("unknown back end %q", name)
	}
	return c.New(f)
}
