//go:build unix

package asyncbus_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/filesink"
)

// Environment of the kill -9 child: log path, ring file, first sequence number.
const (
	durableChildEnv = "ASYNCBUS_DURABLE_CHILD"
	durableRingEnv  = "ASYNCBUS_DURABLE_RING"
	durableStartEnv = "ASYNCBUS_DURABLE_START"
	durablePlainEnv = "ASYNCBUS_DURABLE_PLAIN" // set: the output is a plain *os.File (O_APPEND)
	durableCapacity = 64 << 10                 // small: the ring wraps many times per trial
)

// durableChild logs numbered records through the durable ring into a
// filesink file (or, with durablePlainEnv, a plain *os.File opened
// O_APPEND) until it is killed, and prints "seq N" on stdout (a pipe) after
// every 1000th (plain: 250th) record whose Handle has returned.
func durableChild() int {
	start, err := strconv.ParseUint(os.Getenv(durableStartEnv), 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad start:", err)
		return 2
	}
	var f io.Writer
	if os.Getenv(durablePlainEnv) != "" {
		f, err = os.OpenFile(os.Getenv(durableChildEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	} else {
		f, err = filesink.Open(os.Getenv(durableChildEnv), filesink.Options{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	h, err := asyncbus.Open(f, &asyncbus.Options{
		Ring:    asyncbus.RingOptions{File: os.Getenv(durableRingEnv), Capacity: durableCapacity},
		OnError: func(err error) { fmt.Fprintln(os.Stderr, "child:", err) },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	log := slog.New(h)
	fmt.Println("ready")
	pad := strings.Repeat("p", 6<<10) // < MaxRecord (capacity/8): never oversize
	rng := rand.New(rand.NewPCG(start, 9))
	bigEvery, reportEvery := 50, uint64(1000)
	if os.Getenv(durablePlainEnv) != "" {
		// Longer writes: more kills land inside one and tear a record; the
		// records are larger, so report (and get killed) sooner.
		bigEvery, reportEvery = 4, 250
	}
	for seq := start; ; seq++ {
		n := 40 + rng.IntN(400)
		if rng.IntN(bigEvery) == 0 {
			n = 4<<10 + rng.IntN(2<<10) // some records span pages
		}
		log.Info("kill test", "seq", seq, "pad", pad[:n])
		if seq%reportEvery == 0 {
			fmt.Printf("seq %d\n", seq) // every record up to seq was accepted
		}
	}
}

// TestDurableKill9 kills a logging child with SIGKILL at random moments, 50
// times, then recovers with a new handler on the same ring file and log file
// (a filesink.File); the log must hold every record up to at least the last
// one the child reported as accepted, exactly once, in order, with no torn
// line, and neither the ring nor filesink's torn-tail repair raises an alarm
// (a record torn by the kill is written again whole by the ring).
func TestDurableKill9(t *testing.T) {
	if os.Getenv(durableChildEnv) != "" {
		os.Exit(durableChild())
	}
	durableKill9(t, false, 50, 2026)
}

// TestDurableKill9PlainFile is TestDurableKill9 with a plain *os.File
// (O_APPEND) output, 40 times: a record the kill tore is cut back from the
// file before it is replayed.
func TestDurableKill9PlainFile(t *testing.T) {
	if os.Getenv(durableChildEnv) != "" {
		os.Exit(durableChild())
	}
	durableKill9(t, true, 40, 2027)
}

func durableKill9(t *testing.T, plain bool, trials int, seed uint64) {
	dir := t.TempDir()
	path, ring := filepath.Join(dir, "app.log"), filepath.Join(dir, "app.ring")
	rng := rand.New(rand.NewPCG(seed, 9)) // fixed seed: reproducible kill moments
	var lastSeq uint64                    // last sequence number in the log
	var checked int64                     // bytes of the log verified so far
	var totalRecovered, totalReported uint64
	var torn, replayedRepairs int
	for trial := range trials {
		start := lastSeq + 1
		cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
		cmd.Env = append(os.Environ(), durableChildEnv+"="+path, durableRingEnv+"="+ring,
			durableStartEnv+"="+strconv.FormatUint(start, 10))
		if plain {
			cmd.Env = append(cmd.Env, durablePlainEnv+"=1")
		}
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		br := bufio.NewReader(stdout)
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "ready\n", line)

		reports := make(chan uint64, 1024)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(reports)
			for {
				l, err := br.ReadString('\n')
				if err != nil {
					return // EOF: the child is dead
				}
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), "seq "); ok {
					n, err := strconv.ParseUint(v, 10, 64)
					if err == nil {
						reports <- n
					}
				}
			}
		}()
		// Let it report 0-3 times, then kill it at a random moment within the
		// next 3 ms (the sleep picks the moment; it synchronises nothing).
		var reported uint64
		for range rng.IntN(4) {
			v, ok := <-reports
			require.True(t, ok, "child died early")
			reported = v
		}
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		for v := range reports {
			reported = v
		}
		wg.Wait()
		err = cmd.Wait()
		require.Error(t, err)
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		require.True(t, ok)
		require.Equal(t, syscall.SIGKILL, ws.Signal(), "child died of %v", err)
		if b := readFrom(t, path, checked); len(b) > 0 && b[len(b)-1] != '\n' {
			torn++ // the kill tore a record: recovery must mend it
		}

		// Recovery: a new handler on the same ring file and log file.
		var out io.Writer
		var sink *filesink.File
		var sinkAlarms []error
		if plain {
			pf, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			out = pf
		} else {
			sink, err = filesink.Open(path, filesink.Options{OnError: func(err error) { sinkAlarms = append(sinkAlarms, err) }})
			require.NoError(t, err)
			out = sink
		}
		var warnings []error
		h, err := asyncbus.Open(out, &asyncbus.Options{Ring: asyncbus.RingOptions{File: ring, Capacity: durableCapacity},
			OnError: func(err error) { warnings = append(warnings, err) }})
		require.NoError(t, err)
		recovered := h.Stats().Recovered
		require.NoError(t, h.Close())
		if plain {
			require.NoError(t, out.(*os.File).Close())
		} else {
			require.NoError(t, sink.Close())
			if r := sink.Repaired(); r != nil && r.Replayed {
				replayedRepairs++
			}
		}
		assert.Empty(t, warnings, "trial %d", trial)
		b := readFrom(t, path, checked)
		assert.Empty(t, sinkAlarms, "trial %d: filesink alarm for a record the ring wrote again\n%s",
			trial, describeTornAlarms(sinkAlarms, b, recovered, warnings))
		checked += int64(len(b))
		require.True(t, len(b) == 0 || b[len(b)-1] == '\n', "trial %d: torn line", trial)
		seq := lastSeq
		for i, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			if len(b) == 0 {
				break
			}
			var rec struct {
				Seq uint64 `json:"seq"`
			}
			require.NoError(t, json.Unmarshal(l, &rec), "trial %d line %d not JSON: %.80q", trial, i, l)
			require.Equal(t, seq+1, rec.Seq, "trial %d line %d: a record is missing or repeated", trial, i)
			seq = rec.Seq
		}
		require.GreaterOrEqual(t, seq, reported, "trial %d: accepted records lost", trial)
		lastSeq = seq
		totalRecovered += recovered
		if reported > 0 {
			totalReported += reported - start + 1
		}
		t.Logf("trial %2d: started at %6d, reported %6d, log ends at %6d, recovered from the ring %d",
			trial, start, reported, lastSeq, recovered)
	}
	t.Logf("summary: %d trials, %d records logged, %d reported accepted, %d recovered from the ring file, %d kills tore a record (%d set aside by filesink and written again whole)",
		trials, lastSeq, totalReported, totalRecovered, torn, replayedRepairs)
	require.Positive(t, totalRecovered, "the kills never left records in the ring: the test tests nothing")
}

// describeTornAlarms says, for a failure message, what filesink set aside
// and what recovery wrote after it (log is the trial's part of the log), so
// that a spurious alarm can be told from a real loss.
func describeTornAlarms(alarms []error, log []byte, recovered uint64, warnings []error) string {
	if len(alarms) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "recovered from the ring: %d; ring warnings: %v\n", recovered, warnings)
	for _, a := range alarms {
		var r *filesink.TailRepair
		if !errors.As(a, &r) {
			fmt.Fprintf(&sb, "alarm: %v\n", a)
			continue
		}
		frag, err := os.ReadFile(r.SideFile)
		fmt.Fprintf(&sb, "torn tail: %d bytes at offset %d (read: %v): %.120q\n", r.Fragment, r.Offset, err, frag)
		for i, l := range bytes.Split(log, []byte("\n")) {
			if len(frag) > 0 && bytes.HasPrefix(l, frag) {
				fmt.Fprintf(&sb, "written whole again as line %d of the trial: %.120q\n", i, l)
			}
		}
	}
	return sb.String()
}

// readFrom reads name from offset off to the end.
func readFrom(t *testing.T, name string, off int64) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	require.GreaterOrEqual(t, int64(len(b)), off, "verified records disappeared")
	return b[off:]
}

func TestOpenRingFileLocked(t *testing.T) {
	dir := t.TempDir()
	ring := filepath.Join(dir, "ring")
	var out1, out2 bytes.Buffer
	h1, err := asyncbus.Open(&out1, &asyncbus.Options{Ring: asyncbus.RingOptions{File: ring, Capacity: 4096}})
	require.NoError(t, err)

	_, err = asyncbus.Open(&out2, &asyncbus.Options{Ring: asyncbus.RingOptions{File: ring, Capacity: 4096}})
	require.ErrorIs(t, err, asyncbus.ErrRingLocked)

	// NewHandler cannot return the error: it reports it and logs anyway.
	var reported []error
	h2 := asyncbus.NewHandler(&out2, &asyncbus.Options{Ring: asyncbus.RingOptions{File: ring, Capacity: 4096},
		OnError: func(err error) { reported = append(reported, err) }})
	slog.New(h2).Info("still logged")
	require.NoError(t, h2.Close())
	require.Len(t, reported, 1)
	assert.ErrorIs(t, reported[0], asyncbus.ErrRingLocked)
	assert.Contains(t, out2.String(), "still logged")

	slog.New(h1).Info("durable")
	require.NoError(t, h1.Close())
	assert.Contains(t, out1.String(), "durable")
	assert.Zero(t, h1.Stats().Recovered)
}

func TestOpenWithoutRingFileNeverFails(t *testing.T) {
	var out bytes.Buffer
	h, err := asyncbus.Open(&out, nil)
	require.NoError(t, err)
	slog.New(h).Info("hello")
	require.NoError(t, h.Close())
	assert.Contains(t, out.String(), `"msg":"hello"`)
}

// BenchmarkDurableRing runs the same end-to-end workload (parallel slog
// calls, JSON, into a filesink file, closed at the end) with the heap ring
// and with the ring in a file; compare the two with benchstat.
func BenchmarkDurableRing(b *testing.B) {
	for _, mode := range []string{"heap", "ringfile"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			f, err := filesink.Open(filepath.Join(dir, "bench.log"), filesink.Options{})
			require.NoError(b, err)
			opts := &asyncbus.Options{OnError: func(err error) { b.Error(err) }}
			if mode == "ringfile" {
				opts.Ring.File = filepath.Join(dir, "bench.ring")
			}
			h, err := asyncbus.Open(f, opts)
			require.NoError(b, err)
			log := slog.New(h)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					log.Info("request handled", "method", "GET", "path", "/api/v1/items", "status", 200, "bytes", 5120+i%100, "user", "u-12345")
					i++
				}
			})
			require.NoError(b, h.Close()) // end to end: everything is in the file
			b.StopTimer()
			require.Equal(b, uint64(b.N), h.Stats().Written)
			require.NoError(b, f.Close())
		})
	}
}
