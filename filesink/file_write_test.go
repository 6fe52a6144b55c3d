package filesink

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of file.go's write path (writeRecords, cutTorn, applyCut): a Write
// is all or nothing, short and zero-progress writes, and the cut back of a
// record torn by a failed write, including a cut left pending and one that
// must spare bytes another program appended.

func TestWriteFailureThenRecovery(t *testing.T) {
	recs := [][]byte{rec("e", 0, 30), rec("e", 1, 30), rec("e", 2, 30), rec("e", 3, 30)}
	for _, tc := range []struct {
		name        string
		errno       error
		failures    int // the write, and then the attempt to complete the record
		keep        int
		wantWritten int
		wantLines   int
	}{
		{"ENOSPC mid-record, cut back", syscall.ENOSPC, 2, 45, 1, 1},
		{"EIO at record boundary", syscall.EIO, 1, 60, 2, 2}, // nothing to complete
		{"ENOSPC nothing written", syscall.ENOSPC, 1, 0, 0, 0},
		{"ENOSPC mid-record, completed", syscall.ENOSPC, 1, 75, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			w := &failingWriter{failures: tc.failures, keep: tc.keep, errno: tc.errno}
			var errs errSink
			clk := newClock(t0)
			f, err := open(path, Options{OnError: errs.On, Clock: clk.Now}, func(f *File) { f.writev = w.writev })
			require.NoError(t, err)
			n, err := f.WriteBatch(recs)
			require.ErrorIs(t, err, tc.errno)
			assert.Equal(t, tc.wantWritten, n)
			assert.Len(t, readLines(t, path), tc.wantLines, "only whole records are in the file")
			assert.Empty(t, errs.All(), "write errors go to the caller (the bus reports them), not to the sink's callback")

			// The bus retries the rest after a back-off: the disk has space again.
			n2, err := f.WriteBatch(recs[n:])
			require.NoError(t, err)
			assert.Equal(t, len(recs)-n, n2)
			require.NoError(t, f.Close())
			assert.Equal(t, scanAll(t, path), func() []string {
				var s []string
				for _, r := range recs {
					s = append(s, strings.TrimSuffix(string(r), "\n"))
				}
				return s
			}())
		})
	}
}

// Write is all or nothing even on error: n is 0 and nothing of p is in the
// file, or n is len(p) and all of p is (the write failed part-way and its
// completion succeeded; the error is still returned).
func TestWriteErrorIsAllOrNothing(t *testing.T) {
	p := []byte("0123456789\n")
	for _, tc := range []struct {
		name     string
		failures int // the write, then the attempt to complete it
		keep     int
		wantN    int
		want     string
	}{
		{"fails part-way, completed", 1, 5, len(p), string(p)},
		{"fails part-way, completion fails too", 2, 5, 0, ""},
		{"fails with nothing written", 1, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			w := &failingWriter{failures: tc.failures, keep: tc.keep, errno: syscall.ENOSPC}
			f, err := open(path, Options{OnError: func(error) {}}, func(f *File) { f.writev = w.writev })
			require.NoError(t, err)
			n, err := f.Write(p)
			require.ErrorIs(t, err, syscall.ENOSPC, "the error is returned either way")
			assert.Equal(t, tc.wantN, n)
			require.NoError(t, f.Close())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestShortWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	calls := 0
	f, err := open(path, Options{}, func(f *File) {
		f.writev = func(fd handle, iovs [][]byte) (int, error) {
			calls++
			// Store 7 bytes per call, no error: a legal short write.
			var part [][]byte
			keep := 7
			for _, b := range iovs {
				n := min(keep, len(b))
				part = append(part, b[:n])
				if keep -= n; keep == 0 {
					break
				}
			}
			return writevFD(fd, part)
		}
	})
	require.NoError(t, err)
	recs := [][]byte{rec("s", 0, 20), {}, rec("s", 1, 20), rec("s", 2, 20)}
	n, err := f.WriteBatch(recs)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	assert.Equal(t, 9, calls) // ceil(60/7)
	require.NoError(t, f.Close())
	assert.Len(t, readLines(t, path), 3)
}

func TestZeroProgressWritesDoNotSpin(t *testing.T) {
	for _, tc := range []struct {
		name  string
		errno error
		want  error
	}{
		{"no progress, no error", nil, io.ErrShortWrite},
		{"EINTR forever", syscall.EINTR, syscall.EINTR},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			calls := 0
			f, err := open(path, Options{OnError: func(error) {}}, func(f *File) {
				f.writev = func(handle, [][]byte) (int, error) { calls++; return 0, tc.errno }
			})
			require.NoError(t, err)
			n, err := f.WriteBatch([][]byte{[]byte("a\n")})
			assert.Zero(t, n)
			require.ErrorIs(t, err, tc.want)
			assert.Equal(t, maxZeroWrites, calls, "bounded retries")
			require.NoError(t, f.Close())
		})
	}
}

// Many empty records ahead of a real one are not mistaken for a write that
// made no progress.
func TestManyEmptyRecordsAreNotAShortWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	f, err := Open(path, Options{})
	require.NoError(t, err)
	recs := make([][]byte, 3*iovMax+1)
	for i := range recs {
		recs[i] = []byte{}
	}
	recs[len(recs)-1] = []byte("real\n")
	n, err := f.WriteBatch(recs)
	require.NoError(t, f.Close())
	require.NoError(t, err, "written=%d", n)
	require.Equal(t, len(recs), n)
}

// flakyTruncate fails its next failures calls with err, then truncates
// for real.
type flakyTruncate struct {
	mu       sync.Mutex
	failures int
	err      error
}

func (ft *flakyTruncate) truncate(fd handle, size int64) error {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.failures > 0 {
		ft.failures--
		return ft.err
	}
	return truncateFD(fd, size)
}

func (ft *flakyTruncate) failNext(n int) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.failures = n
}

func TestCutBackFailureBlocksFurtherWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	w := &failingWriter{failures: 2, keep: 5, errno: syscall.EIO}
	tr := &flakyTruncate{failures: 2, err: errors.New("truncate failed")}
	truncErr := tr.err
	f, err := open(path, Options{OnError: func(error) {}}, func(f *File) {
		f.writev = w.writev
		f.truncate = tr.truncate
	})
	require.NoError(t, err)
	n, err := f.Write([]byte("0123456789\n"))
	assert.Zero(t, n)
	require.ErrorIs(t, err, syscall.EIO)
	require.ErrorIs(t, err, truncErr)
	// The torn bytes are still there, so the next write must not go after them.
	n, err = f.Write([]byte("abc\n"))
	assert.Zero(t, n)
	require.ErrorIs(t, err, truncErr)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "0123456789", string(b), "the completion attempt got further, and failed too")
	// Now the cut back succeeds and writing resumes after the last whole record.
	n, err = f.Write([]byte("abc\n"))
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	require.NoError(t, f.Close())
	assert.Equal(t, []string{"abc"}, readLines(t, path))
}

// After copytruncate, cutting back a torn record removes exactly its bytes
// and never extends the file with zeros.
func TestCopytruncateThenCutBackNeverZeroExtends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	w := &failingWriter{failures: 0, keep: 3, errno: syscall.ENOSPC}
	f, err := open(path, Options{OnError: func(error) {}}, func(f *File) { f.writev = w.writev })
	require.NoError(t, err)
	_, err = f.Write([]byte(strings.Repeat("x", 99) + "\n"))
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, 0))
	w.mu.Lock()
	w.failures = 2 // the write and its completion attempt fail part-way
	w.mu.Unlock()
	_, err = f.Write([]byte("0123456789\n"))
	require.Error(t, err)
	require.NoError(t, f.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.False(t, bytes.Contains(b, []byte{0}), "file has %d bytes incl. NULs: %q", len(b), b)
}

// A cut back that failed stays pending; if logrotate's copytruncate then
// empties the file, applying the pending cut must not extend the file with
// zero bytes, whichever call applies it: the next write (before or after the
// path check notices the truncation), a rotation or Close.
func TestPendingCutAfterCopytruncateNeverZeroExtends(t *testing.T) {
	for _, tc := range []struct {
		name string
		next func(t *testing.T, f *File, clk *fakeClock)
		want string
	}{
		{"write after the path check", func(t *testing.T, f *File, clk *fakeClock) {
			clk.Add(DefaultCheckInterval)
			_, err := f.Write([]byte("after\n"))
			require.NoError(t, err)
		}, "after\n"},
		{"write before the path check", func(t *testing.T, f *File, _ *fakeClock) {
			_, err := f.Write([]byte("after\n"))
			require.NoError(t, err)
		}, "after\n"},
		{"rotate", func(t *testing.T, f *File, _ *fakeClock) {
			require.NoError(t, f.Rotate())
		}, ""},
		{"close", func(*testing.T, *File, *fakeClock) {}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			w := &failingWriter{}
			tr := &flakyTruncate{err: errors.New("truncate failed")}
			clk := newClock(t0)
			f, err := open(path, Options{OnError: func(error) {}, Clock: clk.Now}, func(f *File) {
				f.writev = w.writev
				f.truncate = tr.truncate
			})
			require.NoError(t, err)
			for i := range 100 {
				_, err := f.Write(rec("r", i, 100))
				require.NoError(t, err)
			}
			// A write fails part-way, the completion fails, and so does the cut back.
			w.mu.Lock()
			w.failures, w.keep, w.errno = 2, 5, syscall.EIO
			w.mu.Unlock()
			tr.failNext(1)
			_, err = f.Write([]byte("0123456789\n"))
			require.Error(t, err)
			require.NoError(t, os.Truncate(path, 0)) // copytruncate: copied away, emptied

			tc.next(t, f, clk)
			require.NoError(t, f.Close())
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b), "no zero bytes, nothing but the records written since")
			assert.Empty(t, backupFiles(t, dir, "app-"), "an empty file is not rotated")
		})
	}
}

// Rotate while a cut back is pending applies the cut first, so the backup
// never ends in a torn record.
func TestRotateAppliesPendingCutBack(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	w := &failingWriter{failures: 0, keep: 5, errno: syscall.EIO}
	tr := &flakyTruncate{err: errors.New("truncate failed")}
	f, err := open(path, Options{OnError: func(error) {}}, func(f *File) {
		f.writev = w.writev
		f.truncate = tr.truncate
	})
	require.NoError(t, err)
	_, err = f.Write([]byte("whole\n"))
	require.NoError(t, err)
	w.mu.Lock()
	w.failures = 2
	w.mu.Unlock()
	tr.failNext(1)
	_, err = f.Write([]byte("0123456789\n"))
	require.Error(t, err)
	require.NoError(t, f.Rotate())
	require.NoError(t, f.Close())
	bs := backupFiles(t, dir, "app-")
	require.Len(t, bs, 1)
	b, err := os.ReadFile(bs[0])
	require.NoError(t, err)
	require.Equal(t, "whole\n", string(b), "backup holds a torn record")
}

// writeStep is one scripted writev: it stores the first keep bytes, runs
// after (another program appending, say) and returns err.
type writeStep struct {
	keep  int
	err   error
	after func()
}

// scriptedWrites plays its steps on the next writev calls, then writes
// normally.
type scriptedWrites struct {
	mu    sync.Mutex
	steps []writeStep
}

func (s *scriptedWrites) writev(fd handle, iovs [][]byte) (int, error) {
	s.mu.Lock()
	if len(s.steps) == 0 {
		s.mu.Unlock()
		return writevFD(fd, iovs)
	}
	st := s.steps[0]
	s.steps = s.steps[1:]
	s.mu.Unlock()
	var part [][]byte
	for keep := st.keep; keep > 0 && len(iovs) > 0; iovs = iovs[1:] {
		k := min(keep, len(iovs[0]))
		part = append(part, iovs[0][:k])
		keep -= k
	}
	n, err := writevFD(fd, part)
	if err != nil {
		return n, err
	}
	if st.after != nil {
		st.after()
	}
	return n, st.err
}

func (s *scriptedWrites) play(steps ...writeStep) {
	s.mu.Lock()
	s.steps = steps
	s.mu.Unlock()
}

// A write that fails part-way is cut back only while its torn bytes are the
// last ones in the file. Another program appending to the log (echo >>
// app.log; a second filesink.File cannot, see ErrLocked) after those bytes
// keeps its bytes: the fragment stays and the error says why. Appends
// before the write, or copytruncate, do not stop the cut.
func TestCutBackSparesBytesAppendedByAnotherWriter(t *testing.T) {
	const other = "other-program-line\n"
	const mine = "my-record-0123456789\n"
	for _, tc := range []struct {
		name    string
		steps   func(appendOther func()) []writeStep
		before  func(t *testing.T, path string) // runs before the write
		want    string
		wantErr string // "" when the write's error is only the write failure
	}{
		{
			name: "appended between the fragment and the cut",
			steps: func(appendOther func()) []writeStep {
				return []writeStep{{keep: 5, err: syscall.ENOSPC, after: appendOther}, {keep: 0, err: syscall.ENOSPC}}
			},
			want:    mine[:5] + other,
			wantErr: "could not be removed because the file grew underneath",
		},
		{
			name: "appended between two parts of the record",
			steps: func(appendOther func()) []writeStep {
				return []writeStep{{keep: 5, after: appendOther}, {keep: 3, err: syscall.ENOSPC}, {keep: 0, err: syscall.ENOSPC}}
			},
			want:    mine[:5] + other + mine[5:8],
			wantErr: "could not be removed because the file grew underneath",
		},
		{
			name: "appended after the completion attempt",
			steps: func(appendOther func()) []writeStep {
				return []writeStep{{keep: 5, err: syscall.ENOSPC}, {keep: 4, err: syscall.ENOSPC, after: appendOther}}
			},
			want:    mine[:9] + other,
			wantErr: "could not be removed because the file grew underneath",
		},
		{
			name: "appended before the write",
			steps: func(func()) []writeStep {
				return []writeStep{{keep: 5, err: syscall.ENOSPC}, {keep: 0, err: syscall.ENOSPC}}
			},
			before: func(t *testing.T, path string) { appendTo(t, path, other) },
			want:   "earlier\n" + other,
		},
		{
			name: "copytruncate before the write",
			steps: func(func()) []writeStep {
				return []writeStep{{keep: 5, err: syscall.ENOSPC}, {keep: 2, err: syscall.ENOSPC}}
			},
			before: func(t *testing.T, path string) { require.NoError(t, os.Truncate(path, 0)) },
			want:   "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			var w scriptedWrites
			f, err := open(path, Options{OnError: func(error) {}}, func(f *File) { f.writev = w.writev })
			require.NoError(t, err)
			if tc.before != nil {
				_, err = f.Write([]byte("earlier\n"))
				require.NoError(t, err)
				tc.before(t, path)
			}
			w.play(tc.steps(func() { appendTo(t, path, other) })...)
			n, err := f.Write([]byte(mine))
			assert.Zero(t, n)
			require.ErrorIs(t, err, syscall.ENOSPC)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
			} else {
				assert.NotContains(t, err.Error(), "grew underneath")
			}
			require.NoError(t, f.Close())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

// A pending cut back (the truncation failed) is dropped, not applied, if
// another program appended after the torn bytes meanwhile: the other
// program's line stays whole, OnError says so, and writing goes on.
func TestPendingCutSparesBytesAppendedByAnotherWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	var w scriptedWrites
	tr := &flakyTruncate{err: errors.New("truncate failed")}
	var errs errSink
	f, err := open(path, Options{OnError: errs.On}, func(f *File) {
		f.writev = w.writev
		f.truncate = tr.truncate
	})
	require.NoError(t, err)
	w.play(writeStep{keep: 4, err: syscall.EIO}, writeStep{keep: 0, err: syscall.EIO})
	tr.failNext(1)
	_, err = f.Write([]byte("torn-record\n"))
	require.ErrorIs(t, err, syscall.EIO)
	appendTo(t, path, "other\n")
	_, err = f.Write([]byte("next\n"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "tornother\nnext\n", string(got))
	all := errs.All()
	require.Len(t, all, 1)
	assert.ErrorContains(t, all[0], "could not be removed because the file grew underneath")
	assert.ErrorContains(t, all[0], path)
}
