package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// follow prints the file at path from its start and then as it grows,
// like tail -F, until ctx ends: every poll interval at the end of the file
// it checks the path, and reopens it when it names a new file (rotation
// by rename or removal and re-creation; the old file is read to its end
// first) or when the file shrank (truncation: read again from the start).
// A path that does not exist yet is waited for, after one line to
// notices saying so. When ctx ends, what the file holds is printed, an
// unterminated last line included. A truncation followed, within one poll
// interval, by more writes than were read before it goes unnoticed, as
// with tail.
func follow(ctx context.Context, path string, poll time.Duration, out *output, notices io.Writer) error {
	f, err := waitOpen(ctx, path, poll, out, notices)
	if f == nil {
		return err
	}
	defer func() { f.Close() }()
	lr := newLineReader(f)
	for {
		if err := out.drain(lr); err != nil {
			return err
		}
		switch next, reopened, err := changed(path, f); {
		case err != nil:
			return err
		case reopened:
			if err := out.drain(lr); err != nil { // what the writer added before the rename
				return err
			}
			if err := out.endOfFile(lr); err != nil {
				return err
			}
			f.Close()
			f = next
			lr.reset(f)
			continue
		case next == f: // truncated
			if err := out.endOfFile(lr); err != nil {
				return err
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			lr.reset(f)
			continue
		}
		if err := out.flush(); err != nil {
			return err
		}
		if !wait(ctx, poll) {
			if err := out.drain(lr); err != nil {
				return err
			}
			return out.endOfFile(lr)
		}
	}
}

// changed checks the path of open file f at f's end: it returns a newly
// opened file and reopened when the path names another file now, f itself
// when f shrank below the offset read, and nil when nothing changed (the
// path missing, or not openable yet, counts as nothing changed: the new
// file is picked up when it appears).
func changed(path string, f *os.File) (next *os.File, reopened bool, err error) {
	cur, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if fi, err := os.Stat(path); err == nil && !os.SameFile(fi, cur) {
		nf, err := os.Open(path)
		if err != nil {
			return nil, false, nil
		}
		return nf, true, nil
	}
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, false, err
	}
	if cur.Size() < pos {
		return f, false, nil
	}
	return nil, false, nil
}

// waitOpen opens path, waiting for it to appear, which it reports once to
// notices; it returns a nil file when ctx ends first or on an error other
// than the file's absence.
func waitOpen(ctx context.Context, path string, poll time.Duration, out *output, notices io.Writer) (*os.File, error) {
	for reported := false; ; reported = true {
		f, err := os.Open(path)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if !reported {
			fmt.Fprintf(notices, "asyncbus-pretty: %s does not exist yet; waiting for it to appear\n", path)
		}
		if err := out.flush(); err != nil {
			return nil, err
		}
		if !wait(ctx, poll) {
			return nil, nil
		}
	}
}

// wait sleeps for d and reports true, or reports false as soon as ctx ends.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
