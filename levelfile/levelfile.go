// Package levelfile keeps asyncbus per-logger level rules in step with a
// file: a Kubernetes ConfigMap mounted as a volume, or any file rewritten
// or replaced by rename. It polls the file, a stat per poll, and re-reads
// it only when the file it resolves to, its size or its modification time
// changed; a bad update keeps the rules in force and is reported once,
// naming the line.
//
// The file holds rules in the syntax of asyncbus.ParseLevelRules, one or
// more per line (a line's rules separated by ','), with blank lines and
// '#' comments allowed:
//
//	# levels for the manager
//	info
//	controller=debug
//	controller.pod=warn, webhook=-8
//
// An empty file (or one with only comments) means Info for every logger.
package levelfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/asyncbus/asyncbus"
)

// DefaultInterval is the time between two polls when Options.Interval is
// 0. Kubernetes takes up to a minute or more to update a mounted
// ConfigMap, so a second adds nothing noticeable to the delay, and a poll
// that finds nothing new is one stat call.
const DefaultInterval = time.Second

// MaxSize is the largest file Watch reads; a larger one is reported as a
// bad update.
const MaxSize = 64 << 10

// Options configures Watch. The zero value is usable.
type Options struct {
	// Interval is the time between polls: DefaultInterval if 0.
	Interval time.Duration
	// OnError receives each problem once, as an error starting
	// "levelfile: " and naming the file: a bad update (with the line at
	// fault), a file missing or unreadable. A problem that persists is not
	// reported again; the rules in force stay until a good update. Pass
	// the handler's own Options.OnError to report through it; nil writes
	// to standard error. It is called from the polling goroutine (and,
	// for the first read, from Watch), never twice at once.
	OnError func(error)
}

// Watcher polls one file for a LevelRules. Close stops it.
type Watcher struct {
	rules    *asyncbus.LevelRules
	path     string
	interval time.Duration
	onError  func(error)

	mu       sync.Mutex  // serialises polls (the goroutine's and tests'); held while OnError runs
	last     os.FileInfo // the file whose content was read last; nil: read at the next poll
	lastText string      // that content, so that a touch or an identical swap changes nothing
	read     bool        // lastText holds a content read
	lastOK   bool        // lastText was good, and is in force unless the rules were Set since
	reported string      // the problem reported last, not repeated while it persists

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// Watch reads path now, applies its rules to rules (rules.Set), and then
// polls it every Options.Interval until Close, applying each change. A
// problem with the first read is reported to Options.OnError before Watch
// returns, like any later one, and rules keep what they held; the file is
// applied once it is fixed. Watch fails only for a nil rules, an empty
// path or a negative interval.
func Watch(rules *asyncbus.LevelRules, path string, opts *Options) (*Watcher, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case rules == nil:
		return nil, errors.New("levelfile: Watch needs rules")
	case path == "":
		return nil, errors.New("levelfile: Watch needs a path")
	case o.Interval < 0:
		return nil, fmt.Errorf("levelfile: negative interval %v", o.Interval)
	}
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.OnError == nil {
		o.OnError = func(err error) { fmt.Fprintln(os.Stderr, err) }
	}
	w := &Watcher{
		rules: rules, path: path, interval: o.Interval, onError: o.OnError,
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	w.poll()
	go w.run()
	return w, nil
}

// Close stops the polling and returns once its goroutine has ended. It is
// idempotent; the rules keep what the file last set.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() { close(w.stop) })
	<-w.done
	return nil
}

func (w *Watcher) run() {
	defer close(w.done)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.poll()
		}
	}
}

// poll is one look at the file: a stat, and a read only when the file it
// resolves to (through every symbolic link), its size or its modification
// time changed since the last read.
func (w *Watcher) poll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	fi, err := os.Stat(w.path)
	if err != nil {
		w.last = nil // read again once it is back
		w.report(fmt.Errorf("levelfile: %w; keeping the rules in force", err))
		return
	}
	if w.last != nil && os.SameFile(fi, w.last) && fi.Size() == w.last.Size() && fi.ModTime().Equal(w.last.ModTime()) {
		return
	}
	w.reload()
}

// reload reads the file and applies it if it is new and good. The stat it
// remembers is the open file's, so it describes the content read even if
// the file is replaced meanwhile.
func (w *Watcher) reload() {
	text, fi, err := readFile(w.path)
	if err != nil {
		w.last = fi // nil, or a file over MaxSize: refused until its stat changes
		w.report(fmt.Errorf("levelfile: %w; keeping the rules in force", err))
		return
	}
	w.last = fi
	if w.read && text == w.lastText {
		if w.lastOK {
			w.reported = "" // back after a read error: a later one is a new problem
		}
		return // touched, or swapped for the same content: nothing to apply or report again
	}
	w.lastText, w.read = text, true
	spec, err := parseFile(w.path, text)
	if err == nil {
		err = w.rules.Set(spec) // cannot fail: parseFile parsed spec
	}
	w.lastOK = err == nil
	if err != nil {
		w.report(fmt.Errorf("%w; keeping the rules in force", err))
		return
	}
	w.reported = ""
}

// openFile is os.Open; tests count the calls.
var openFile = os.Open

// readFile returns the content of path, at most MaxSize bytes, and the
// open file's stat; for a file over MaxSize, the stat with the error.
func readFile(path string) (string, os.FileInfo, error) {
	f, err := openFile(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxSize {
		return "", fi, fmt.Errorf("%s: larger than %d bytes", path, MaxSize)
	}
	return string(b), fi, nil
}

// report passes err to OnError unless it is the problem reported last.
func (w *Watcher) report(err error) {
	if msg := err.Error(); msg != w.reported {
		w.reported = msg
		w.onError(err)
	}
}

// parseFile turns the file's text into one rule string, or an error
// naming the first line at fault: a line whose rules are bad on their
// own, or the line whose rules clash with an earlier line's (a second
// default, a logger set twice).
func parseFile(path, text string) (string, error) {
	var rules []string
	for i, line := range strings.Split(text, "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if _, err := asyncbus.ParseLevelRules(line); err != nil {
			return "", fmt.Errorf("levelfile: %s line %d: %w", path, i+1, err)
		}
		rules = append(rules, line)
		if _, err := asyncbus.ParseLevelRules(strings.Join(rules, ",")); err != nil {
			return "", fmt.Errorf("levelfile: %s line %d clashes with an earlier line: %w", path, i+1, err)
		}
	}
	return strings.Join(rules, ","), nil
}
