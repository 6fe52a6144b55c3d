// Command asyncbus-pretty prints log lines for people: it reads logs
// written by log/slog (JSON and Text), asyncbus (every format: JSON, Text,
// Logfmt, Console, ZapJSON, ZapConsole, GCPJSON, ECSJSON, DatadogJSON),
// zap (production and development, JSON and console), zerolog, logrus
// (text and JSON), phuslu/log, logr, klog, pino and bunyan (numeric
// levels) and logfmt, and writes each record in asyncbus's Console format
// ("15:04:05.000 LEVEL dir/file.go:12 message key=value ..."), coloured on
// a terminal.
//
// Install it from a clone of the repository with
//
//	go install ./cmd/asyncbus-pretty
//
// (once the module is published, go install
// github.com/asyncbus/asyncbus/cmd/asyncbus-pretty@latest).
//
// Usage:
//
//	asyncbus-pretty [flags] [file ...]
//	app 2>&1 | asyncbus-pretty -level warn -match logger=db
//	asyncbus-pretty -f /var/log/app.log
//
// With no file (or "-") it reads standard input; -f prints one file from
// its start and then as it grows, across rotation (like tail -F); a file
// that does not exist yet is reported once on standard error and waited
// for. Every
// input line gives exactly one output line, in order: a line it does not
// recognise (a panic's stack, a banner, a line cut short) is written
// unchanged, byte for byte: an input's last line without a newline is
// written without one (a newline is added only if more output follows).
// Only the filters leave lines out: -level hides records below a level
// (lines without a level are kept) and -match key=value, repeatable, keeps
// only records with all those fields (lines it does not recognise have no
// fields and are hidden); the stack trace lines zap's console encoding
// writes below a record are kept or hidden with it. asyncbus's drop
// markers and other "asyncbus:"
// records bypass the filters, since they report lost records, and carry a
// badge with their count ([DROPPED 42]), as do sampling markers
// ([SUPPRESSED 7]).
//
// With -check it prints nothing of the records: it reads the numbers
// asyncbus's Options.Features.Sequence writes, from the files in the order given
// (rotated files oldest first, ".gz" ones included) or standard input,
// and reports per run identity the numbers missing, duplicated and out of
// order, the records drop markers account for, and whether the run ended
// with Close (its run-end line) or without (a crash, an exit without
// Close, or its last lines or file missing: reported, not failed). It
// reads the numbers only where asyncbus writes them, first on a line: an
// attribute or a message spelling seq=, run= or run_end= counts for
// nothing. A line cut short is reported as torn: one with the next
// record glued to it, or an input's last line without its newline. It
// exits 1 when a gap is not accounted for by a drop marker, a number
// comes twice (each record exactly once is what the numbers prove), or a
// run-end line disagrees with its run (it counts more numbers than are there, or
// a numbered line follows it).
//
// Colour follows -color: auto (the default) colours a terminal unless
// NO_COLOR is set, CLICOLOR=0 or TERM=dumb, and colours anything when
// FORCE_COLOR or CLICOLOR_FORCE is set; always; never.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/asyncbus/asyncbus/internal/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command with its arguments and streams; it returns the exit
// status: 0, 1 when an input failed, 2 for a usage error.
func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer, stderr io.Writer) int {
	fs := flag.NewFlagSet("asyncbus-pretty", flag.ContinueOnError)
	fs.SetOutput(stderr)
	checkFlag := fs.Bool("check", false, "check Options.Features.Sequence's numbers instead of printing: per run, gaps, duplicates, order, whether drop markers account for every gap and whether the run ended with Close (exit 1 on an unexplained gap, a duplicate or a run-end line that disagrees)")
	followFlag := fs.Bool("f", false, "follow the file as it grows, across rotation and truncation (like tail -F)")
	levelFlag := fs.String("level", "", "hide records below this level: trace, debug, info, warn, error, fatal, or a form such as info+2")
	colorFlag := fs.String("color", "auto", "colour: auto (on a terminal, per NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE, TERM=dumb), always or never")
	utc := fs.Bool("utc", false, "show times in UTC instead of as written (epoch times: local; Console clocks, which have no zone: as written)")
	poll := fs.Duration("poll", 250*time.Millisecond, "with -f, how often to check the file at its end")
	var f filter
	fs.Func("match", "keep only records with this `key=value` field (repeatable: all must match)", func(s string) error {
		m, err := parseMatch(s)
		f.matches = append(f.matches, m)
		return err
	})
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: asyncbus-pretty [flags] [file ...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *checkFlag {
		return check(fs.Args(), stdin, stdout, stderr) // check.go
	}
	if *levelFlag != "" {
		l, err := parseMinLevel(*levelFlag)
		if err != nil {
			return usage(stderr, err)
		}
		f.minLevel, f.hasLevel = l, true
	}
	color, err := colorMode(*colorFlag, stdout)
	if err != nil {
		return usage(stderr, err)
	}
	files := fs.Args()
	if *followFlag && (len(files) != 1 || files[0] == "-") {
		return usage(stderr, errors.New("-f follows exactly one file"))
	}
	if *poll <= 0 {
		return usage(stderr, errors.New("-poll must be positive"))
	}
	out := newOutput(newPrinter(color, *utc, f), stdout)
	if *followFlag {
		err := follow(ctx, files[0], *poll, out, stderr)
		if ferr := out.flush(); err == nil {
			err = ferr
		}
		return report(stderr, err)
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	code := 0
	for _, name := range files {
		if err := printFile(name, stdin, out); err != nil {
			code = report(stderr, err)
		}
	}
	if err := out.flush(); err != nil {
		code = report(stderr, err)
	}
	return code
}

// printFile prints the file name ("-": stdin) to its end.
func printFile(name string, stdin io.Reader, out *output) error {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	lr := newLineReader(r)
	if err := out.drain(lr); err != nil {
		return err
	}
	return out.endOfFile(lr)
}

// colorMode applies -color to stdout.
func colorMode(mode string, stdout io.Writer) (bool, error) {
	switch strings.ToLower(mode) {
	case "always":
		return term.Colors(stdout, true), nil
	case "never":
		return false, nil
	case "auto":
		return term.Colors(stdout, false), nil
	}
	return false, fmt.Errorf("-color wants auto, always or never, got %q", mode)
}

func usage(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "asyncbus-pretty:", err)
	return 2
}

func report(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "asyncbus-pretty:", err)
	return 1
}
