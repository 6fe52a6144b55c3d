package asyncbus

import (
	"context"
	"log"
	"log/slog"
	"runtime"
	"strings"
	"time"
)

// SetDefault makes h the handler of slog.Default and of the standard log
// package, whose lines then wait for their write as Error records do.
//
//	asyncbus.SetDefault(asyncbus.NewHandler(os.Stdout, nil))
//	defer asyncbus.CloseDefault()
//
// It is slog.SetDefault(slog.New(h)) with one difference. slog.SetDefault
// sends log's lines to h at Info, queued like any Info record, so
// log.Fatal and log.Panic, which end the program at once, lose their own
// line when the program was busy. Here each log line (at Info, the level
// slog gives them, with log's flags cleared as slog clears them) is in the
// output before log's call returns, within the Error wait's bound: as
// log.Printf writing to os.Stderr, log's lines are written when the call
// returns, and log.Fatal, log.Panic and an os.Exit after log.Print keep
// them. Lines below h's level are discarded, as slog does.
//
// Like slog.SetDefault, it does not close a handler it replaces.
func SetDefault(h *Handler) {
	// As slog.SetDefault does: log's file flags become the record's source.
	capturePC := log.Flags()&(log.Lshortfile|log.Llongfile) != 0
	slog.SetDefault(slog.New(h))
	waiting := *h
	waiting.waitWrite = true
	log.SetOutput(&stdLogWriter{h: &waiting, capturePC: capturePC})
	log.SetFlags(0) // the record has the time, and the source when asked
}

// stdLogWriter is the standard log package's output after SetDefault: each
// Write is one log line, handled as a record at Info by h, a handler that
// waits for every record's write.
type stdLogWriter struct {
	h         *Handler
	capturePC bool
}

// Write handles p, one line of the log package, as a record at Info, and
// returns once it is written or the Error wait's bound has passed.
func (w *stdLogWriter) Write(p []byte) (int, error) {
	ctx := context.Background()
	if !w.h.Enabled(ctx, slog.LevelInfo) {
		return len(p), nil
	}
	var pc uintptr
	if w.capturePC {
		var pcs [1]uintptr
		// Skip runtime.Callers, this Write, log's output method and the log
		// function the program called: the program's call remains.
		runtime.Callers(4, pcs[:])
		pc = pcs[0]
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, strings.TrimSuffix(string(p), "\n"), pc)
	return len(p), w.h.Handle(ctx, r)
}
