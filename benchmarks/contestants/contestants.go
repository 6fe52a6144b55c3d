// Package contestants defines the slog handler set-ups that the side-by-side
// comparison (cmd/compare, and the Benchmark functions of this module)
// measures against asyncbus on the reference workload of
// github.com/asyncbus/asyncbus/benchmarks/harness.
//
// Every contestant is a [harness.Contestant]: a constructor that builds
// a slog.Handler writing JSON to the *os.File it is given, plus a flush that
// returns once every handled record is in that file. They all sit behind the
// same slog.Logger front end and get the same reference record:
//
//   - slog-file: slog.JSONHandler writing straight to the file;
//   - slog-bufio: slog.JSONHandler through a 64 KiB bufio.Writer;
//   - mutex-write: the seeds' "traditional" synchronous logger: encode
//     (slog JSON) into a per-call buffer, then take a mutex and write the
//     record to the file, one write(2) per record;
//   - law-chan-bufio: LAW (seed 003): encode on the caller, send a copy of
//     the bytes over a buffered channel, one goroutine writes them through a
//     bufio.Writer;
//   - zap-buffered: zap's zapslog handler on a zapcore.BufferedWriteSyncer;
//   - zerolog-diode: zerolog's own slog handler (zerolog.NewSlogHandler, new
//     in v1.35) on its lossy diode writer, losses counted by the alert func;
//   - phuslu-async: phuslu/log's Logger.Slog() handler on its AsyncWriter
//     over a FileWriter, which drains with writev(2);
//   - asyncbus-block and asyncbus-drop: asyncbus in Block and Drop mode;
//   - noop: a handler that discards everything, the floor set by slog's own
//     front end.
package contestants

import (
	"time"

	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

// The contestants' names, as tables, charts and filters show them.
const (
	AsyncbusBlock = "asyncbus-block"
	AsyncbusDrop  = "asyncbus-drop"
	// AsyncbusDurable is asyncbus-block with the ring in a memory-mapped
	// file (Options.Ring.File): what surviving kill -9 costs.
	AsyncbusDurable = "asyncbus-durable"
	SlogFile        = "slog-file"
	SlogBufio       = "slog-bufio"
	MutexWrite      = "mutex-write"
	LAW             = "law-chan-bufio"
	Zap             = "zap-buffered"
	Zerolog         = "zerolog-diode"
	Phuslu          = "phuslu-async"
	Noop            = "noop"
)

// Baseline is the contestant the tables' ratio column divides by.
const Baseline = SlogFile

// Buffer and queue sizes of the contestants that have one. Where the
// library documents a recommended value it is used; elsewhere the value is
// chosen so that no contestant is handicapped by a small buffer.
const (
	// BufioSize is the bufio.Writer size of slog-bufio and law-chan-bufio
	// (bufio's 4 KiB default would cost them extra write calls).
	BufioSize = 64 << 10
	// LAWQueue is law-chan-bufio's channel capacity, in records.
	LAWQueue = 4096
	// PhusluChannelSize is phuslu's AsyncWriter.ChannelSize, the value its
	// README uses for asynchronous file logging.
	PhusluChannelSize = 4096
	// DiodeSize and DiodePoll are zerolog's diode ring size and poll
	// interval, the values of zerolog's README example.
	DiodeSize = 1000
	// DiodePoll is the diode reader's poll interval when it finds the ring
	// empty.
	DiodePoll = 10 * time.Millisecond
)

// Names lists every contestant's name in table order.
func Names() []string {
	return []string{AsyncbusBlock, AsyncbusDrop, AsyncbusDurable, SlogFile, SlogBufio, MutexWrite, LAW, Zap, Zerolog, Phuslu, Noop}
}

// MayLose reports whether a contestant is allowed to lose records:
// asyncbus-drop (which must report every loss in its drop markers) and
// zerolog-diode (whose diode overwrites records by design; its losses are
// counted from the file and shown, never hidden). Everyone else must write
// every record.
func MayLose(name string) bool { return name == AsyncbusDrop || name == Zerolog }

// MustAccount reports whether a contestant that loses records must account
// for each of them with in-band drop markers (asyncbus's promise). zerolog's
// diode only tells its alert func, so its losses are reported apart.
func MustAccount(name string) bool { return name != Zerolog }

// All returns every contestant, in the order of Names.
func All() []harness.Contestant {
	return []harness.Contestant{
		{Name: AsyncbusBlock, New: newAsyncbus(false)},
		{Name: AsyncbusDrop, New: newAsyncbus(true)},
		{Name: AsyncbusDurable, New: newAsyncbusDurable},
		{Name: SlogFile, New: newSlogFile},
		{Name: SlogBufio, New: newSlogBufio},
		{Name: MutexWrite, New: newMutexWrite},
		{Name: LAW, New: newLAW},
		{Name: Zap, New: newZap},
		{Name: Zerolog, New: newZerolog},
		{Name: Phuslu, New: newPhuslu},
		{Name: Noop, New: harness.NewNoop, Discards: true},
	}
}

// ByName returns the contestant called name, and false if there is none.
func ByName(name string) (harness.Contestant, bool) {
	for _, c := range All() {
		if c.Name == name {
			return c, true
		}
	}
	return harness.Contestant{}, false
}
