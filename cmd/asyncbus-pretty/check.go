package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// span is the numbers [lo, hi).
type span struct{ lo, hi uint64 }

func (s span) String() string {
	if s.hi-s.lo == 1 {
		return fmt.Sprint(s.lo)
	}
	return fmt.Sprintf("%d-%d", s.lo, s.hi-1)
}

// runCheck is what -check knows of one run identity's numbers.
type runCheck struct {
	run      string
	order    int    // when the run was first seen (the report's order)
	max      uint64 // the highest number seen (the end of the last span)
	records  uint64 // numbered lines that are records
	markers  uint64 // drop markers
	dropped  uint64 // the numbers drop markers account for
	holes    []span // numbers not seen (yet), ascending: gaps
	dups     uint64 // numbers seen twice
	firstDup []uint64
	reorder  uint64 // numbers that came after a higher one (filling a gap)
	ends     int    // run-end lines (Close's)
	endCount uint64 // the count of numbers the last run-end line gives
	afterEnd uint64 // numbers seen after a run-end line
}

// add takes the numbers [lo, hi) of one line (a record: one number; a
// drop marker: one per record lost at its gap).
func (c *runCheck) add(lo, hi uint64) {
	switch {
	case lo > c.max:
		if lo > c.max+1 {
			c.holes = append(c.holes, span{c.max + 1, lo})
		}
		c.max = hi - 1
		return
	case hi-1 > c.max: // overlaps the top: the overlap is duplicated
		c.noteDup(lo, c.max+1)
		c.max = hi - 1
		return
	}
	// Entirely at or below max: a late number filling a gap, or a repeat.
	filled := c.fill(lo, hi)
	c.reorder += filled
	if filled < hi-lo {
		c.noteDup(lo, lo+(hi-lo-filled))
	}
}

// fill removes [lo, hi) from the holes and returns how many numbers it
// found missing there.
func (c *runCheck) fill(lo, hi uint64) uint64 {
	var n uint64
	out := c.holes[:0]
	for _, h := range c.holes {
		a, b := max(h.lo, lo), min(h.hi, hi)
		if a >= b {
			out = append(out, h)
			continue
		}
		n += b - a
		if h.lo < a {
			out = append(out, span{h.lo, a})
		}
		if b < h.hi {
			out = append(out, span{b, h.hi})
		}
	}
	c.holes = out
	return n
}

func (c *runCheck) noteDup(lo, hi uint64) {
	c.dups += hi - lo
	for n := lo; n < hi && len(c.firstDup) < 5; n++ {
		c.firstDup = append(c.firstDup, n)
	}
}

// missing is how many numbers are in gaps no drop marker accounts for.
func (c *runCheck) missing() uint64 {
	var n uint64
	for _, h := range c.holes {
		n += h.hi - h.lo
	}
	return n
}

// checker reads numbered lines and keeps one runCheck per run identity.
type checker struct {
	runs       map[string]*runCheck
	unnumbered uint64 // lines without a number (other writers, torn lines, a flight recorder entry's inner lines)
	torn       uint64 // lines a numbered record began inside of (a crash's fragment, the next line glued to it)
	cut        uint64 // inputs whose last line has no newline (a record cut short by a crash, or being written)
	p          parser
	r          record
}

func newChecker() *checker { return &checker{runs: make(map[string]*runCheck)} }

// line checks one line. A kill -9 can leave a record torn in a plain
// file, and the next start's first line then follows the fragment on the
// same line: the record that begins inside the line is checked on its
// own, after the fragment, which counts as torn (and as its own number,
// if its prefix survived: that record is damaged, not missing).
func (k *checker) line(line []byte) {
	if e, ok := parseRunEnd(line); ok {
		c := k.run(e.run)
		c.ends++
		c.endCount = e.count
		return
	}
	if i := k.gluedRecord(line); i > 0 {
		k.torn++
		k.line(line[:i])
		line = line[i:]
	}
	pre, ok := parseSeqPrefix(line)
	if !ok {
		if len(bytes.TrimSpace(line)) > 0 {
			k.unnumbered++
		}
		return
	}
	c := k.run(pre.run)
	if c.ends > 0 {
		c.afterEnd++
	}
	n := uint64(1)
	if pre.drop > 0 { // a drop marker: its own first key, which no record's line takes
		n = pre.drop
		c.markers++
		c.dropped += n
	} else {
		c.records++
	}
	if pre.seq == 0 || pre.seq+n < pre.seq {
		k.unnumbered++ // not a number asyncbus writes (they start at 1)
		return
	}
	c.add(pre.seq, pre.seq+n)
}

// run returns the runCheck of the run identity run, new if need be.
func (k *checker) run(run string) *runCheck {
	c := k.runs[run]
	if c == nil {
		c = &runCheck{run: run, order: len(k.runs)}
		k.runs[run] = c
	}
	return c
}

// read checks every line of r.
func (k *checker) read(r io.Reader) error {
	lr := newLineReader(r)
	for {
		line, err := lr.next()
		if err != nil {
			if rest, ok := lr.rest(); ok {
				k.cut++
				k.line(rest)
			}
			if err == io.EOF {
				return nil
			}
			return err
		}
		k.line(line)
	}
}

// report writes one line per run and returns whether every gap is
// accounted for by a drop marker, no number came twice, and every run-end
// line agrees with its run: it counts the highest number, and no numbered line follows it. A
// run without a run-end line is reported (it ended without Close: a crash
// is documented), not failed.
func (k *checker) report(w io.Writer) bool {
	runs := make([]*runCheck, 0, len(k.runs))
	for _, c := range k.runs {
		runs = append(runs, c)
	}
	slices.SortFunc(runs, func(a, b *runCheck) int { return a.order - b.order })
	ok := true
	for _, c := range runs {
		if c.max == 0 && c.records == 0 && c.endCount == 0 {
			continue // a run that gave out no numbers (only its run-end line): nothing to check
		}
		miss := c.missing()
		verdict := "ok"
		badEnd := c.ends > 0 && (c.endCount != c.max || c.afterEnd > 0)
		switch {
		case miss > 0:
			verdict, ok = "FAIL: unexplained gaps", false
		case c.dups > 0:
			verdict, ok = "FAIL: duplicated numbers", false // exactly once is the proof
		case badEnd:
			verdict, ok = "FAIL: the run-end line disagrees", false
		}
		fmt.Fprintf(w, "run %s: numbers 1-%d: %d records, %d dropped at %d drop markers, %d missing, %d duplicated, %d out of order: %s\n",
			c.run, c.max, c.records, c.dropped, c.markers, miss, c.dups, c.reorder, verdict)
		if miss > 0 {
			fmt.Fprintf(w, "  missing: %s\n", spans(c.holes, 10))
		}
		if c.dups > 0 {
			fmt.Fprintf(w, "  duplicated, first: %v\n", c.firstDup)
		}
		switch {
		case c.ends == 0:
			fmt.Fprintln(w, "  ended without Close: no run-end line (a crash, an exit without Close, or its last lines or file missing)")
		case c.endCount != c.max:
			fmt.Fprintf(w, "  the run-end line counts %d numbers, the highest seen is %d\n", c.endCount, c.max)
		}
		if c.afterEnd > 0 {
			fmt.Fprintf(w, "  %d numbered lines after the run-end line\n", c.afterEnd)
		}
	}
	if len(runs) == 0 {
		fmt.Fprintln(w, "no numbered lines (is Options.Features.Sequence set?)")
	}
	if k.unnumbered > 0 {
		fmt.Fprintf(w, "%d lines without a number\n", k.unnumbered)
	}
	if k.torn > 0 {
		fmt.Fprintf(w, "%d torn lines: a record cut short (a crash) with the next one glued to it\n", k.torn)
	}
	if k.cut > 0 {
		fmt.Fprintf(w, "%d torn last lines: an input ends without a newline (a record cut short by a crash, or still being written)\n", k.cut)
	}
	return ok
}

func spans(s []span, most int) string {
	parts := make([]string, 0, min(len(s), most)+1)
	for i, h := range s {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more gaps", len(s)-most))
			break
		}
		parts = append(parts, h.String())
	}
	return strings.Join(parts, ", ")
}

// check is -check: it reads the files in the order given (rotated files
// oldest first; ".gz" ones, or any gzip stream, decompressed), or stdin,
// and reports per run identity. It returns 1 when a gap in the numbers is
// not accounted for by a drop marker, a number comes twice, a run-end line
// disagrees, or an input cannot be read.
func check(files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(files) == 0 {
		files = []string{"-"}
	}
	k := newChecker()
	code := 0
	for _, name := range files {
		if err := checkFile(k, name, stdin); err != nil {
			fmt.Fprintln(stderr, "asyncbus-pretty:", err)
			code = 1
		}
	}
	if !k.report(stdout) {
		code = 1
	}
	return code
}

// checkFile checks one input, decompressing a gzip stream.
func checkFile(k *checker, name string, stdin io.Reader) error {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		if err := k.read(zr); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	if err := k.read(br); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
