package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// orchestra runs servers and load generators as child processes.
type orchestra struct {
	self     string
	dur      time.Duration
	cores    int
	slowRate int
}

// runResult is one run of one back end in one scenario.
type runResult struct {
	server  serverStats
	load    loadResult
	records uint64 // record lines found in the output
	markers uint64 // drop-marker lines
	marked  uint64 // records the markers say were dropped
}

func (r runResult) reqPerSec() float64 {
	return float64(r.load.Requests) / r.load.Elapsed.Seconds()
}

// lost is how many records the output lacks.
func (r runResult) lost() int64 {
	return int64(2*r.server.Requests+r.server.Errors) - int64(r.records)
}

func (r runResult) String() string {
	return fmt.Sprintf("%.0f req/s, log p50 %v p99 %v p99.9 %v max %v, Error max %v, cpu %.1f µs/req, lost %d (marked %d), close %v",
		r.reqPerSec(), r.server.P50, r.server.P99, r.server.P999, r.server.Max, r.server.ErrMax,
		float64(r.server.CPU.Microseconds())/float64(max(r.server.Requests, 1)),
		r.lost(), r.marked, r.server.CloseTime.Round(time.Millisecond))
}

// once runs one back end in one scenario: the server, the load, the stop.
func (o orchestra) once(scenario string, e entry, conns int) (runResult, error) {
	var res runResult
	dir, err := os.MkdirTemp("", "servicebench")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	srv := exec.Command(e.bin, "-serve", e.backend, "-cores", strconv.Itoa(o.cores))
	var reader *lineReader
	var pw *os.File
	switch scenario {
	case "file":
		srv.Args = append(srv.Args, "-out", filepath.Join(dir, "app.log"))
	case "fastpipe", "slowpipe":
		pr, w, err := os.Pipe()
		if err != nil {
			return res, err
		}
		pw = w
		srv.Args = append(srv.Args, "-out", "-")
		srv.Stdout = pw
		rate := 0
		if scenario == "slowpipe" {
			rate = o.slowRate
		}
		reader = newLineReader(pr, rate)
	default:
		return res, fmt.Errorf("unknown scenario %q", scenario)
	}
	errPipe, err := srv.StderrPipe()
	if err != nil {
		return res, err
	}
	if err := srv.Start(); err != nil {
		return res, err
	}
	if pw != nil {
		pw.Close() // the server holds the write end now
	}
	ctl := bufio.NewScanner(errPipe)
	addr, err := expect(ctl, "addr ")
	if err != nil {
		_ = srv.Process.Kill()
		return res, err
	}
	lg := exec.Command(o.self, "-load", addr, "-conns", strconv.Itoa(conns), "-dur", o.dur.String())
	lg.Env = append(os.Environ(), "GOMAXPROCS=1")
	lg.Stderr = os.Stderr
	out, err := lg.Output()
	if err == nil {
		err = json.Unmarshal(bytes.TrimSpace(out), &res.load)
	}
	if reader != nil {
		reader.unpace() // drain the backlog fast: the measurement is over
	}
	_ = srv.Process.Signal(stopSignal)
	js, serr := expect(ctl, "stats ")
	if serr == nil {
		serr = json.Unmarshal([]byte(js), &res.server)
	}
	_, _ = io.Copy(io.Discard, errPipe)
	werr := srv.Wait()
	if err = errors.Join(err, serr, werr); err != nil {
		return res, err
	}
	if reader != nil {
		res.records, res.markers, res.marked = reader.wait()
	} else {
		f, err := os.Open(filepath.Join(dir, "app.log"))
		if err != nil {
			return res, err
		}
		defer f.Close()
		res.records, res.markers, res.marked = countLines(f)
	}
	return res, nil
}

// expect reads control lines until one starting with prefix, and returns
// the rest of it.
func expect(s *bufio.Scanner, prefix string) (string, error) {
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), prefix); ok {
			return rest, nil
		}
		fmt.Fprintln(os.Stderr, "server:", s.Text())
	}
	return "", fmt.Errorf("server ended before %q: %v", prefix, s.Err())
}

// lineReader reads the server's stdout, at rate bytes a second (0: as fast
// as it can), and counts its lines.
type lineReader struct {
	paced atomic.Bool
	done  chan [3]uint64
}

func newLineReader(r io.ReadCloser, rate int) *lineReader {
	lr := &lineReader{done: make(chan [3]uint64, 1)}
	lr.paced.Store(rate > 0)
	go func() {
		defer r.Close()
		pr, pw := io.Pipe()
		counted := make(chan [3]uint64, 1)
		go func() {
			rec, mk, marked := countLines(pr)
			counted <- [3]uint64{rec, mk, marked}
		}()
		buf := make([]byte, 4096)
		start, total := time.Now(), 0
		for {
			n, err := r.Read(buf)
			if n > 0 {
				_, _ = pw.Write(buf[:n])
				total += n
				if lr.paced.Load() {
					if ahead := time.Duration(float64(total)/float64(rate)*float64(time.Second)) - time.Since(start); ahead > 0 {
						time.Sleep(ahead) // the reader's pace: a log shipper that drains rate bytes a second
					}
				}
			}
			if err != nil {
				break
			}
		}
		pw.Close()
		lr.done <- <-counted
	}()
	return lr
}

func (lr *lineReader) unpace() { lr.paced.Store(false) }

func (lr *lineReader) wait() (records, markers, marked uint64) {
	c := <-lr.done
	return c[0], c[1], c[2]
}

// dropMarker is what asyncbus's JSON drop marker line contains.
const dropMarker = `"msg":"asyncbus: records dropped"`

// countLines counts record lines and drop markers (and the records they
// say were dropped) in r.
func countLines(r io.Reader) (records, markers, marked uint64) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		line := s.Bytes()
		if bytes.Contains(line, []byte(dropMarker)) {
			markers++
			if i := bytes.Index(line, []byte(`"dropped":`)); i >= 0 {
				rest := line[i+len(`"dropped":`):]
				j := bytes.IndexAny(rest, ",}")
				if n, err := strconv.ParseUint(string(rest[:max(j, 0)]), 10, 64); err == nil {
					marked += n
				}
			}
			continue
		}
		records++
	}
	return records, markers, marked
}

func numCPU() int { return runtime.NumCPU() }

// loadAverage is the machine's 1-minute load average, as /proc says.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
}
