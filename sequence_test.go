package asyncbus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSequenceInEveryFormat(t *testing.T) {
	for _, tc := range []struct {
		format asyncbus.Format
		first  string // the start of line 1, with %s for the run identity
	}{
		{asyncbus.JSON, `{"seq":1,"run":"%s","time":`},
		{asyncbus.ZapJSON, `{"seq":1,"run":"%s","level":"info"`},
		{asyncbus.GCPJSON, `{"seq":1,"run":"%s","time":`},
		{asyncbus.ECSJSON, `{"seq":1,"run":"%s",`},
		{asyncbus.DatadogJSON, `{"seq":1,"run":"%s",`},
		{asyncbus.Text, `seq=1 run=%s time=`},
		{asyncbus.Logfmt, `seq=1 run=%s ts=`},
		{asyncbus.Console, `seq=1 run=%s `},
		{asyncbus.ZapConsole, `seq=1 run=%s `},
	} {
		t.Run(tc.format.String(), func(t *testing.T) {
			var buf bytes.Buffer
			h := asyncbus.NewHandler(&buf, &asyncbus.Options{Format: tc.format, Encoding: asyncbus.EncodingOptions{Color: asyncbus.ColorNever}, Features: asyncbus.FeatureOptions{Sequence: true}})
			require.Len(t, h.Stats().RunID, 16)
			l := slog.New(h)
			for i := range 3 {
				l.Info("hello", "i", i)
			}
			require.NoError(t, h.Close())
			lines := recordLines(t, buf.String(), h.Stats().RunID, 3)
			require.Len(t, lines, 3)
			assert.True(t, strings.HasPrefix(lines[0], fmt.Sprintf(tc.first, h.Stats().RunID)), lines[0])
			for i, line := range lines {
				if strings.HasPrefix(line, "{") {
					var m map[string]any
					require.NoError(t, json.Unmarshal([]byte(line), &m), line)
					assert.EqualValues(t, i+1, m["seq"])
					assert.Equal(t, h.Stats().RunID, m["run"])
				} else {
					assert.True(t, strings.HasPrefix(line, fmt.Sprintf("seq=%d run=%s ", i+1, h.Stats().RunID)), line)
				}
			}
		})
	}
}

// recordLines returns the lines of out but its last, which must be the
// run-end line Close writes for run after count numbers.
func recordLines(t *testing.T, out, run string, count int) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.NotEmpty(t, lines)
	last := lines[len(lines)-1]
	if strings.HasPrefix(last, "{") {
		assert.Equal(t, fmt.Sprintf(`{"run_end":"%s","count":%d,"msg":"asyncbus: run ended"}`, run, count), last)
	} else {
		assert.Equal(t, fmt.Sprintf(`run_end=%s count=%d msg="asyncbus: run ended"`, run, count), last)
	}
	return lines[:len(lines)-1]
}

// TestSequenceCloseEndsTheRun: Close writes the run-end line once, after
// every record, with the count of numbers given out (lost ones too); a
// handler whose output numbers in its own encoding writes none.
func TestSequenceCloseEndsTheRun(t *testing.T) {
	var buf bytes.Buffer
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{Format: asyncbus.Text, Features: asyncbus.FeatureOptions{Sequence: true}})
	l := slog.New(h.Named("child")) // a derived handler closes the same run
	for i := range 5 {
		l.Info("x", "i", i)
	}
	require.NoError(t, h.Close())
	require.NoError(t, h.Close())
	lines := recordLines(t, buf.String(), h.Stats().RunID, 5)
	assert.Len(t, lines, 5)
	assert.Equal(t, 1, strings.Count(buf.String(), "run_end="), "once")
}

// TestSequenceUniqueKeysRenameTheUsersSeqAndRun: with UniqueKeys, a
// record's own seq and run are written as seq_ and run_: each key once,
// the numbers' first.
func TestSequenceUniqueKeysRenameTheUsersSeqAndRun(t *testing.T) {
	for _, f := range []asyncbus.Format{asyncbus.JSON, asyncbus.Text} {
		t.Run(f.String(), func(t *testing.T) {
			var buf bytes.Buffer
			h := asyncbus.NewHandler(&buf, &asyncbus.Options{Format: f, Encoding: asyncbus.EncodingOptions{UniqueKeys: true}, Features: asyncbus.FeatureOptions{Sequence: true}})
			slog.New(h).With("run", "job-7").Info("step", "seq", 5)
			require.NoError(t, h.Close())
			lines := recordLines(t, buf.String(), h.Stats().RunID, 1)
			require.Len(t, lines, 1)
			line := lines[0]
			if f == asyncbus.JSON {
				assert.True(t, strings.HasPrefix(line, fmt.Sprintf(`{"seq":1,"run":"%s",`, h.Stats().RunID)), line)
				assert.Equal(t, 1, strings.Count(line, `"seq":`), line)
				assert.Equal(t, 1, strings.Count(line, `"run":`), line)
				assert.Contains(t, line, `"run_":"job-7"`)
				assert.Contains(t, line, `"seq_":5`)
			} else {
				assert.True(t, strings.HasPrefix(line, fmt.Sprintf(`seq=1 run=%s `, h.Stats().RunID)), line)
				assert.Equal(t, 1, strings.Count(line, ` seq=`)+strings.Count(line[:4], `seq=`), line)
				assert.Contains(t, line, ` run_=job-7`)
				assert.Contains(t, line, ` seq_=5`)
			}
		})
	}
}

func TestSequenceOffWritesNoKeys(t *testing.T) {
	var buf bytes.Buffer
	h := asyncbus.NewHandler(&buf, nil)
	slog.New(h).Info("hello")
	require.NoError(t, h.Close())
	assert.True(t, strings.HasPrefix(buf.String(), `{"time":`), buf.String())
	assert.Empty(t, h.Stats().RunID)
}

func TestSequenceEmptyObjectStaysJSON(t *testing.T) {
	// A ReplaceAttr that removes every key leaves an empty object: the
	// numbers must not add a trailing comma.
	var buf bytes.Buffer
	drop := func([]string, slog.Attr) slog.Attr { return slog.Attr{} }
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{ReplaceAttr: drop, Features: asyncbus.FeatureOptions{Sequence: true}})
	slog.New(h).Info("gone")
	require.NoError(t, h.Close())
	assert.Equal(t, fmt.Sprintf(`{"seq":1,"run":"%s"}`+"\n"+`{"run_end":"%[1]s","count":1,"msg":"asyncbus: run ended"}`+"\n", h.Stats().RunID), buf.String())
}

func TestSequenceQuietRecordsTakeTheirNumbersInOrder(t *testing.T) {
	// A quiet handler on a regular file: its records wait quietly for
	// their write, the Error records for theirs.
	path := filepath.Join(t.TempDir(), "app.log")
	f, err := os.Create(path)
	require.NoError(t, err)
	h := asyncbus.NewHandler(f, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}})
	l := slog.New(h)
	for i := range 20 {
		if i%5 == 4 {
			l.Error("bad", "i", i)
		} else {
			l.Info("ok", "i", i)
		}
	}
	require.NoError(t, h.Close())
	require.NoError(t, f.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := recordLines(t, string(data), h.Stats().RunID, 20)
	require.Len(t, lines, 20)
	for i, line := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		assert.EqualValues(t, i+1, m["seq"], line)
		assert.EqualValues(t, i, m["i"], line)
	}
}

func TestSequenceWithRingFile(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	h, err := asyncbus.Open(&buf, &asyncbus.Options{Ring: asyncbus.RingOptions{File: filepath.Join(dir, "ring")}, Features: asyncbus.FeatureOptions{Sequence: true}})
	require.NoError(t, err)
	slog.New(h).Info("kept")
	require.NoError(t, h.Close())
	assert.True(t, strings.HasPrefix(buf.String(), `{"seq":1,"run":"`), buf.String())
}

// BenchmarkSequence is Options.Features.Sequence's cost: the same records into
// io.Discard with the numbers off and on, from 1 goroutine and from 4
// (RunParallel with GOMAXPROCS*parallelism goroutines).
func BenchmarkSequence(b *testing.B) {
	for _, on := range []bool{false, true} {
		for _, g := range []int{1, 4} {
			name := fmt.Sprintf("seq=%v/goroutines=%d", on, g)
			b.Run(name, func(b *testing.B) {
				h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: on}})
				defer h.Close()
				l := slog.New(h)
				ctx := context.Background()
				b.ReportAllocs()
				if g == 1 {
					for b.Loop() {
						l.LogAttrs(ctx, slog.LevelInfo, "request handled", slog.String("method", "GET"), slog.Int("status", 200))
					}
					return
				}
				b.SetParallelism(max(1, g/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						l.LogAttrs(ctx, slog.LevelInfo, "request handled", slog.String("method", "GET"), slog.Int("status", 200))
					}
				})
			})
		}
	}
}

// BenchmarkSequenceDurable is Options.Features.Sequence's cost with the
// durable ring: the same records into io.Discard through a ring file, with
// the numbers off and on, from 1 goroutine and from 4.
func BenchmarkSequenceDurable(b *testing.B) {
	for _, on := range []bool{false, true} {
		for _, g := range []int{1, 4} {
			b.Run(fmt.Sprintf("seq=%v/goroutines=%d", on, g), func(b *testing.B) {
				o := &asyncbus.Options{Ring: asyncbus.RingOptions{File: filepath.Join(b.TempDir(), "ring")}, Features: asyncbus.FeatureOptions{Sequence: on}}
				h, err := asyncbus.Open(io.Discard, o)
				require.NoError(b, err)
				defer h.Close()
				l := slog.New(h)
				ctx := context.Background()
				b.ReportAllocs()
				b.SetParallelism(max(1, g/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						l.LogAttrs(ctx, slog.LevelInfo, "request handled", slog.String("method", "GET"), slog.Int("status", 200))
					}
				})
			})
		}
	}
}

func TestSequenceFlightRecorderEntryTakesOneNumber(t *testing.T) {
	var buf bytes.Buffer
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true, FlightRecorder: &asyncbus.FlightRecorder{}}})
	l := slog.New(h)
	l.Info("before")
	l.Debug("kept 1")
	l.Debug("kept 2")
	l.Error("trigger")
	l.Info("after")
	require.NoError(t, h.Close())
	lines := recordLines(t, buf.String(), h.Stats().RunID, 3)
	require.Len(t, lines, 7, buf.String())
	var seqs []any
	var msgs []string
	for _, line := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		seqs = append(seqs, m["seq"])
		msgs = append(msgs, m["msg"].(string))
	}
	assert.Equal(t, []string{"before", "asyncbus: flight recorder: records kept before the next one", "kept 1", "kept 2",
		"asyncbus: flight recorder: end", "trigger", "after"}, msgs)
	assert.Equal(t, []any{1.0, 2.0, nil, nil, nil, nil, 3.0}, seqs, "the entry's first line carries its number")
}

// lineEncoder is an output's own encoding, as a third party writes one:
// records are "|level msg\n" lines; the leading '|' marks its own records,
// and AppendSequence puts "#N@run" in its place.
type lineEncoder struct{}

func (lineEncoder) WithAttrs([]slog.Attr) asyncbus.Encoder { return lineEncoder{} }
func (lineEncoder) WithGroup(string) asyncbus.Encoder      { return lineEncoder{} }
func (lineEncoder) AppendRecord(dst []byte, _ context.Context, r slog.Record, _ string, _ []slog.Attr) []byte {
	return append(append(append(append(dst, '|'), r.Level.String()...), ' '), r.Message+"\n"...)
}

// seqLineEncoder is lineEncoder with the numbers.
type seqLineEncoder struct{ lineEncoder }

func (seqLineEncoder) AppendSequence(dst, rec []byte, seq uint64, run string) ([]byte, int) {
	if len(rec) == 0 || rec[0] != '|' {
		return nil, 0
	}
	return fmt.Appendf(dst, "#%d@%s ", seq, run), 1
}

func (seqLineEncoder) AppendDropMarker(dst []byte, _ time.Time, n uint64) []byte {
	return fmt.Appendf(dst, "|WARN dropped %d\n", n)
}

func TestSequenceNeedsTheEncoderMethods(t *testing.T) {
	_, err := asyncbus.OpenWithEncoder(io.Discard, lineEncoder{}, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}})
	require.EqualError(t, err, "asyncbus: Options.Features.Sequence needs an Encoder with the AppendSequence and AppendDropMarker methods, and asyncbus_test.lineEncoder has not")
	h, err := asyncbus.OpenWithEncoder(io.Discard, lineEncoder{}, nil)
	require.NoError(t, err, "without the numbers it is fine")
	require.NoError(t, h.Close())
}

// A ring file's replay numbers records in the handler's own formats only:
// an output's own Encoder cannot have both.
func TestSequenceEncoderRefusesRingFile(t *testing.T) {
	ring := filepath.Join(t.TempDir(), "ring")
	_, err := asyncbus.OpenWithEncoder(io.Discard, seqLineEncoder{}, &asyncbus.Options{
		Features: asyncbus.FeatureOptions{Sequence: true}, Ring: asyncbus.RingOptions{File: ring}})
	require.EqualError(t, err, "asyncbus: Options.Features.Sequence with Options.Ring.File is not available with an output's own Encoder yet")
	_, statErr := os.Stat(ring)
	assert.True(t, os.IsNotExist(statErr), "refused before the ring file is made")
}

// An output's own Encoder with the sequence methods numbers the records in its encoding,
// a quiet handler's and an Error record's alike.
func TestSequenceEncoderNumbersInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	f, err := os.Create(path)
	require.NoError(t, err)
	h, err := asyncbus.OpenWithEncoder(f, seqLineEncoder{}, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}})
	require.NoError(t, err)
	l := slog.New(h)
	for i := range 20 {
		if i%5 == 4 {
			l.Error(fmt.Sprint("bad ", i))
		} else {
			l.Info(fmt.Sprint("ok ", i))
		}
	}
	require.NoError(t, h.Close())
	require.NoError(t, f.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 20)
	for i, line := range lines {
		level := "INFO ok"
		if i%5 == 4 {
			level = "ERROR bad"
		}
		assert.Equal(t, fmt.Sprintf("#%d@%s %s %d", i+1, h.Stats().RunID, level, i), line)
	}
}

// A line another logger encoded (HandleEncoded) is not the encoder's own
// record: it is written as it is and takes no number.
func TestSequenceEncoderLeavesForeignLinesUnnumbered(t *testing.T) {
	var buf bytes.Buffer
	h, err := asyncbus.OpenWithEncoder(&buf, seqLineEncoder{}, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}})
	require.NoError(t, err)
	slog.New(h).Info("one")
	require.NoError(t, h.HandleEncoded(slog.LevelInfo, []byte("from elsewhere\n")))
	slog.New(h).Info("two")
	require.NoError(t, h.Close())
	run := h.Stats().RunID
	assert.Equal(t, "#1@"+run+" INFO one\nfrom elsewhere\n#2@"+run+" INFO two\n", buf.String())
}

// gateWriter is an output whose writes wait until open is closed.
type gateWriter struct {
	open chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (w *gateWriter) Write(p []byte) (int, error) {
	<-w.open
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// panickyMarkerEncoder is seqLineEncoder whose drop marker panics.
type panickyMarkerEncoder struct{ seqLineEncoder }

func (panickyMarkerEncoder) AppendDropMarker([]byte, time.Time, uint64) []byte { panic("no marker") }

// Drop mode with the output held: the gap's marker is the Encoder's own
// record, numbered with the first lost number; when AppendDropMarker
// panics, it is the handler's line in Options.Format, unnumbered, and the
// numbers still account for the loss.
func TestSequenceEncoderDropMarker(t *testing.T) {
	for _, tc := range []struct {
		name string
		enc  asyncbus.Encoder
	}{
		{"the encoder's marker", seqLineEncoder{}},
		{"the format's marker when the encoder's panics", panickyMarkerEncoder{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &gateWriter{open: make(chan struct{})}
			h, err := asyncbus.OpenWithEncoder(w, tc.enc, &asyncbus.Options{Ring: asyncbus.RingOptions{Capacity: 4 << 10, Overflow: asyncbus.Drop}, Features: asyncbus.FeatureOptions{Sequence: true}})
			require.NoError(t, err)
			l := slog.New(h)
			logged := 0
			for h.Stats().Dropped == 0 {
				l.Info("filler")
				logged++
				require.Less(t, logged, 100000, "nothing was dropped")
			}
			close(w.open)
			l.Info("after")
			logged++
			require.NoError(t, h.Close())
			st := h.Stats()
			require.EqualValues(t, logged, st.Written+st.Dropped)
			require.EqualValues(t, 1, st.DropMarkers)
			run := st.RunID
			next, markers := uint64(1), 0
			for _, line := range strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n") {
				var seq, dropped uint64
				switch {
				case strings.HasPrefix(line, "{"): // the format's marker
					var m map[string]any
					require.NoError(t, json.Unmarshal([]byte(line), &m), line)
					assert.Equal(t, "asyncbus: records dropped", m["msg"])
					assert.Nil(t, m["seq"], "unnumbered")
					next += uint64(m["dropped"].(float64))
					markers++
					continue
				case strings.Contains(line, "WARN dropped"):
					_, err := fmt.Sscanf(line, "#%d@"+run+" WARN dropped %d", &seq, &dropped)
					require.NoError(t, err, line)
					markers++
				default:
					_, err := fmt.Sscanf(line, "#%d@"+run, &seq)
					require.NoError(t, err, line)
					dropped = 1
				}
				require.Equal(t, next, seq, line)
				next += dropped
			}
			assert.Equal(t, 1, markers)
			assert.EqualValues(t, logged+1, next, "every number is a record's or the marker's")
		})
	}
}
