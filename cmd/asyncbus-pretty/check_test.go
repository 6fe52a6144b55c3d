package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asyncbus/asyncbus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSeqPrefix(t *testing.T) {
	for _, tc := range []struct {
		line, run, rest string
		seq             uint64
		ok              bool
	}{
		{`{"seq":12,"run":"ab01","msg":"x"}`, "ab01", `{"msg":"x"}`, 12, true},
		{`{"seq":1,"run":"ab01"}`, "ab01", `{}`, 1, true},
		{`seq=7 run=ff00 time=t msg=x`, "ff00", `time=t msg=x`, 7, true},
		{`seq=7 run=ff00 11:38:23.762 INFO  hello`, "ff00", `11:38:23.762 INFO  hello`, 7, true},
		{`{"seq":"12","run":"ab"}`, "", "", 0, false},                    // a string: not ours
		{`{"run":"ab","seq":1}`, "", "", 0, false},                       // not first: not ours
		{`seq=7 run=XYZ msg=x`, "", "", 0, false},                        // not hex
		{`seq=x run=ab msg=x`, "", "", 0, false},                         // not a number
		{`{"seq":99999999999999999999999,"run":"ab"}`, "", "", 0, false}, // overflows
		{`time=t seq=7 run=ab`, "", "", 0, false},
		{`{"drop_seq":4,"run":"ab","drop_count":3,"msg":"x"}`, "ab", `{"msg":"x"}`, 4, true},
		{`drop_seq=4 run=ab drop_count=3 msg=x`, "ab", `msg=x`, 4, true},
		{`{"drop_seq":4,"run":"ab","msg":"x"}`, "", "", 0, false},                // no count: not ours
		{`drop_seq=4 run=ab drop_count=0 msg=x`, "", "", 0, false},               // a marker loses at least one
		{`{"msg":"x","drop_seq":4,"run":"ab","drop_count":3}`, "", "", 0, false}, // not first
	} {
		t.Run(tc.line, func(t *testing.T) {
			p, ok := parseSeqPrefix([]byte(tc.line))
			require.Equal(t, tc.ok, ok)
			if ok {
				assert.Equal(t, tc.seq, p.seq)
				assert.Equal(t, tc.run, p.run)
				assert.Equal(t, tc.rest, string(p.rest))
				if strings.Contains(tc.line, "drop_seq") {
					assert.EqualValues(t, 3, p.drop)
				} else {
					assert.Zero(t, p.drop)
				}
			}
		})
	}
}

// drop is a JSON drop marker numbered seq for n records.
func drop(seq, n string) string {
	return `{"drop_seq":` + seq + `,"run":"aa","drop_count":` + n + `,"time":"2026-12-02T10:00:00Z","level":"WARN","msg":"asyncbus: records dropped","dropped":` + n + `}`
}

func rec(seq string) string { return `{"seq":` + seq + `,"run":"aa","msg":"m"}` }

func TestCheckReports(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		code  int
		want  []string
	}{
		{"contiguous", []string{rec("1"), rec("2"), rec("3")}, 0,
			[]string{"run aa: numbers 1-3: 3 records, 0 dropped at 0 drop markers, 0 missing, 0 duplicated, 0 out of order: ok"}},
		{"gap covered by a drop marker", []string{rec("1"), drop("2", "5"), rec("7")}, 0,
			[]string{"numbers 1-7: 2 records, 5 dropped at 1 drop markers, 0 missing"}},
		{"a marker for one record is no record", []string{rec("1"), drop("2", "1"), rec("3")}, 0,
			[]string{"numbers 1-3: 2 records, 1 dropped at 1 drop markers, 0 missing"}},
		{"a marker short of the gap", []string{rec("1"), drop("2", "2"), rec("7")}, 1,
			[]string{"3 missing", "missing: 4-6", "FAIL: unexplained gaps"}},
		{"unexplained gap", []string{rec("1"), rec("4")}, 1, []string{"2 missing", "missing: 2-3"}},
		{"first numbers missing", []string{rec("3"), rec("4")}, 1, []string{"missing: 1-2"}},
		{"duplicates", []string{rec("1"), rec("2"), rec("2"), rec("1")}, 1, []string{"2 duplicated", "duplicated, first: [2 1]", "FAIL: duplicated numbers"}},
		{"out of order", []string{rec("1"), rec("3"), rec("2")}, 0, []string{"0 missing, 0 duplicated, 1 out of order: ok"}},
		{"two runs", []string{rec("1"), `seq=1 run=bb msg=x`, rec("2"), `seq=2 run=bb msg=x`}, 0,
			[]string{"run aa: numbers 1-2", "run bb: numbers 1-2"}},
		{"unnumbered lines", []string{rec("1"), "panic: boom", `{"msg":"other"}`, rec("2")}, 0, []string{"2 lines without a number"}},
		{"nothing numbered", []string{`{"msg":"x"}`}, 0, []string{"no numbered lines"}},
		{"a torn record with the next run's first glued to it", []string{rec("1"), `{"seq":2,"run":"aa","ms` + `{"seq":1,"run":"bb","msg":"m"}`, `{"seq":2,"run":"bb","msg":"m"}`}, 0,
			[]string{"run aa: numbers 1-2: 2 records", "run bb: numbers 1-2: 2 records, 0 dropped at 0 drop markers, 0 missing", "1 torn lines"}},
		{"torn inside the prefix", []string{rec("1"), `{"se` + rec("2")}, 0,
			[]string{"run aa: numbers 1-2: 2 records", "1 lines without a number", "1 torn lines"}},
		{"key=value glued", []string{`seq=1 run=bb msg=x`, `seq=2 run=bb msg="cut` + `seq=3 run=bb msg=x`}, 0,
			[]string{"run bb: numbers 1-3: 3 records, 0 dropped at 0 drop markers, 0 missing", "1 torn lines"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			in := strings.NewReader(strings.Join(tc.lines, "\n") + "\n")
			code := check(nil, in, &out, &errOut)
			assert.Equal(t, tc.code, code, out.String())
			for _, w := range tc.want {
				assert.Contains(t, out.String(), w)
			}
		})
	}
}

func TestCheckReadsFilesInOrderAndGzip(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "app-1.log.gz")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write([]byte(rec("1") + "\n" + rec("2") + "\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(old, gz.Bytes(), 0o600))
	cur := filepath.Join(dir, "app.log")
	require.NoError(t, os.WriteFile(cur, []byte(rec("3")+"\n"+rec("4")), 0o600)) // no final newline
	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(t.Context(), append([]string{"-check"}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String() + errOut.String()
	}
	code, out := run(old, cur)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "numbers 1-4: 4 records, 0 dropped at 0 drop markers, 0 missing, 0 duplicated, 0 out of order: ok")
	assert.Contains(t, out, "1 torn last lines")
	code, out = run(cur)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "missing: 1-2")
	code, out = run(cur, old)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "2 out of order")
	code, out = run(filepath.Join(dir, "absent.log"))
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "absent.log")
}

// TestCheckUserContentIsNoRecord: attributes, groups and messages spelling
// out the numbers' prefix, written by asyncbus in each format, make no
// phantom run, no missing number and no torn line on a whole file.
func TestCheckUserContentIsNoRecord(t *testing.T) {
	for _, f := range []asyncbus.Format{asyncbus.JSON, asyncbus.Text, asyncbus.Logfmt, asyncbus.Console, asyncbus.ZapConsole} {
		t.Run(fmt.Sprint(f), func(t *testing.T) {
			var buf bytes.Buffer
			h := asyncbus.NewHandler(&buf, &asyncbus.Options{Format: f, Features: asyncbus.FeatureOptions{Sequence: true}})
			l := slog.New(h)
			l.Info("step", "seq", 3, "run", 42, "k", "v")
			l.Info("step", "seq", 5, "run", "0123456789abcdef", "k", "v")
			l.Info("step", slog.Group("g", "seq", 3, "run", "0123456789abcdef", "msg", "m"))
			l.Info("child said: seq=7 run=0123456789abcdef")
			l.Info("child said: seq=7 run=0123456789abcdef time=2026-12-02T10:00:00Z level=INFO msg=x")
			l.Info("relay", "line", `seq=7 run=0123456789abcdef time=2026-12-02T10:00:00Z level=INFO msg=x`)
			l.Info(`relay {"seq":7,"run":"0123456789abcdef","msg":"x"}`)
			require.NoError(t, h.Close())
			code, out := checkBytes(t, buf.Bytes())
			assert.Equal(t, 0, code, out+buf.String())
			assert.Equal(t, 1, strings.Count(out, "run "), out)
			assert.Contains(t, out, "numbers 1-7: 7 records, 0 dropped at 0 drop markers, 0 missing, 0 duplicated", out)
			assert.NotContains(t, out, "torn", out)
		})
	}
}

func TestCheckReportsATornLastLine(t *testing.T) {
	code, out := checkBytes(t, []byte(rec("1")+"\n"+`{"seq":2,"run":"aa","ms`))
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "numbers 1-2: 2 records")
	assert.Contains(t, out, "1 torn last lines")
	code, out = checkBytes(t, []byte(rec("1")+"\n"+rec("2")+"\n"))
	assert.Equal(t, 0, code, out)
	assert.NotContains(t, out, "torn", out)
}

// TestCheckRunEnd: Close's run-end line proves a run's end: a run cut
// short after its last record is reported as ended without Close (not a
// failure), one whose last records are gone fails, and records' own
// attributes cannot write a run-end line.
func TestCheckRunEnd(t *testing.T) {
	for _, f := range []asyncbus.Format{asyncbus.JSON, asyncbus.Text} {
		t.Run(fmt.Sprint(f), func(t *testing.T) {
			var buf bytes.Buffer
			drop := func(groups []string, a slog.Attr) slog.Attr {
				if groups == nil && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
					return slog.Attr{} // the user's attributes come first after the numbers
				}
				return a
			}
			h := asyncbus.NewHandler(&buf, &asyncbus.Options{Format: f, ReplaceAttr: drop, Features: asyncbus.FeatureOptions{Sequence: true}})
			l := slog.New(h)
			run := h.Stats().RunID
			for i := range 5 {
				l.Info("x", "run_end", run, "count", 2, "i", i) // worded like a run-end line, after the numbers
			}
			require.NoError(t, h.Close())
			lines := strings.SplitAfter(buf.String(), "\n")
			require.Len(t, lines, 7) // five records, the run-end line, ""
			end := lines[5]
			require.Contains(t, end, "run_end")

			code, out := checkBytes(t, buf.Bytes())
			assert.Equal(t, 0, code, out)
			assert.Contains(t, out, "numbers 1-5: 5 records, 0 dropped at 0 drop markers, 0 missing, 0 duplicated, 0 out of order: ok")
			assert.NotContains(t, out, "ended without Close")

			cut := strings.Join(lines[:5], "") // the run-end line lost: a crash
			code, out = checkBytes(t, []byte(cut))
			assert.Equal(t, 0, code, out)
			assert.Contains(t, out, "ended without Close")

			lost := strings.Join(lines[:3], "") + end // the last two records deleted
			code, out = checkBytes(t, []byte(lost))
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, "FAIL: the run-end line disagrees")
			assert.Contains(t, out, "the run-end line counts 5 numbers, the highest seen is 3")

			after := strings.Join(lines[:6], "") + lines[2] // a numbered line after the end
			code, out = checkBytes(t, []byte(after))
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, "1 numbered lines after the run-end line")
		})
	}
}

func TestParseRunEnd(t *testing.T) {
	for _, tc := range []struct {
		line  string
		run   string
		count uint64
		ok    bool
	}{
		{`{"run_end":"ab01","count":7,"msg":"asyncbus: run ended"}`, "ab01", 7, true},
		{`run_end=ab01 count=0 msg="asyncbus: run ended"`, "ab01", 0, true},
		{`{"seq":1,"run":"ab01","run_end":"ab01","count":7}`, "", 0, false}, // a record: it starts with its number
		{`seq=1 run=ab01 run_end=ab01 count=7`, "", 0, false},
		{`{"run_end":"XY","count":7}`, "", 0, false},
		{`run_end=ab01 count=x`, "", 0, false},
	} {
		e, ok := parseRunEnd([]byte(tc.line))
		require.Equal(t, tc.ok, ok, tc.line)
		assert.Equal(t, tc.run, e.run, tc.line)
		assert.Equal(t, tc.count, e.count, tc.line)
	}
}
