package filesink

import (
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2025, 3, 14, 10, 20, 30, 0, time.UTC)

func TestOpenCreatesDirectoriesAndAppends(t *testing.T) {
	for _, tc := range []struct {
		name string
		perm os.FileMode
		want os.FileMode
	}{
		{"default perm", 0, 0o644},
		{"custom perm", 0o600, 0o600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a", "b", "app.log")
			f, err := Open(path, Options{Perm: tc.perm})
			require.NoError(t, err)
			n, err := f.Write([]byte("one\n"))
			require.NoError(t, err)
			assert.Equal(t, 4, n)
			require.NoError(t, f.Close())
			require.NoError(t, f.Close(), "Close is idempotent")

			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, tc.want, fi.Mode().Perm())

			f, err = Open(path, Options{Perm: tc.perm})
			require.NoError(t, err)
			w, err := f.WriteBatch([][]byte{[]byte("two\n"), []byte("three\n")})
			require.NoError(t, err)
			assert.Equal(t, 2, w)
			assert.Nil(t, f.Repaired())
			require.NoError(t, f.Close())
			assert.Equal(t, []string{"one", "two", "three"}, readLines(t, path))
		})
	}
}

func TestClosedAndBadInput(t *testing.T) {
	dir := t.TempDir()
	_, err := Open("", Options{})
	require.Error(t, err)
	_, err = Open(filepath.Join(dir, "x.log"), Options{Perm: os.ModeDir | 0o644})
	require.ErrorContains(t, err, "Perm")
	_, err = Open(dir, Options{})
	require.ErrorContains(t, err, dir) // a directory cannot be opened for writing
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	_, err = Open(filepath.Join(notDir, "x.log"), Options{})
	require.ErrorContains(t, err, "create directory")

	f, err := Open(filepath.Join(dir, "x.log"), Options{})
	require.NoError(t, err)
	w, err := f.WriteBatch(nil)
	require.NoError(t, err)
	assert.Equal(t, 0, w)
	w, err = f.WriteBatch([][]byte{{}, []byte("a\n"), {}})
	require.NoError(t, err)
	assert.Equal(t, 3, w)
	require.NoError(t, f.Close())
	for name, call := range map[string]func() error{
		"Write":      func() error { _, err := f.Write([]byte("x\n")); return err },
		"WriteBatch": func() error { _, err := f.WriteBatch([][]byte{[]byte("x\n")}); return err },
		"Sync":       f.Sync,
		"Rotate":     f.Rotate,
	} {
		assert.ErrorIs(t, call(), ErrClosed, name)
	}
	assert.Equal(t, []string{"a"}, readLines(t, filepath.Join(dir, "x.log")))
}

func TestPermissionErrorIsClear(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	_, err := open(path, Options{}, func(f *File) {
		f.openFile = func(name string, _ int, _ os.FileMode) (*os.File, error) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EACCES}
		}
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrPermission)
	assert.Contains(t, err.Error(), "permission denied")
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "write permission")

	if os.Geteuid() != 0 { // root ignores mode bits; the injected case above always runs
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o500))
		_, err = Open(filepath.Join(ro, "app.log"), Options{})
		assert.ErrorIs(t, err, fs.ErrPermission)
		assert.Contains(t, err.Error(), "permission denied")
	}
}

func TestWriterWithSlog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	f, err := Open(path, Options{})
	require.NoError(t, err)
	log := slog.New(slog.NewJSONHandler(f, nil))
	for i := range 10 {
		log.Info("hello", "i", i)
	}
	require.NoError(t, f.Close())
	lines := readLines(t, path)
	require.Len(t, lines, 10)
	assert.Contains(t, lines[9], `"i":9`)
}

func TestRotateBySize(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxSize   int64
		batch     int // records per WriteBatch; 0 uses Write
		records   int
		wantFiles int
	}{
		{"Write", 100, 0, 10, 4},                   // 3 x 32 bytes per file
		{"batches of 2", 100, 2, 10, 5},            // 64 bytes per file
		{"batch larger than MaxSize", 50, 4, 8, 2}, // never split: 128 bytes each
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			clk := newClock(t0)
			f, err := Open(path, Options{MaxSize: tc.maxSize, Clock: clk.Now, UTC: true})
			require.NoError(t, err)
			var want []string
			for i := 0; i < tc.records; {
				clk.Add(time.Millisecond)
				if tc.batch == 0 {
					r := rec("r", i, 32)
					_, err := f.Write(r)
					require.NoError(t, err)
					want = append(want, string(r[:31]))
					i++
					continue
				}
				var b [][]byte
				for j := 0; j < tc.batch; j++ {
					b = append(b, rec("r", i, 32))
					want = append(want, string(b[j][:31]))
					i++
				}
				n, err := f.WriteBatch(b)
				require.NoError(t, err)
				require.Equal(t, tc.batch, n)
			}
			require.NoError(t, f.Close())
			files := backupFiles(t, dir, "app-")
			require.Len(t, files, tc.wantFiles-1)
			files = append(files, path)
			assert.Equal(t, want, scanAll(t, files...))
			for _, name := range files {
				fi, err := os.Stat(name)
				require.NoError(t, err)
				if tc.batch*32 <= int(tc.maxSize) {
					assert.LessOrEqual(t, fi.Size(), tc.maxSize, name)
				}
			}
		})
	}
}

func TestRotateByTime(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rotate  Rotation
		steps   []time.Duration // clock advance before each write
		backups []string
	}{
		{"hourly", RotateHourly,
			[]time.Duration{0, 30 * time.Minute, 10 * time.Minute, 2 * time.Hour},
			[]string{"app-2025-03-14T11-00-30.000.log", "app-2025-03-14T13-00-30.000.log"}},
		{"daily", RotateDaily,
			[]time.Duration{0, 12 * time.Hour, 2 * time.Hour, 24 * time.Hour, time.Minute},
			[]string{"app-2025-03-15T00-20-30.000.log", "app-2025-03-16T00-20-30.000.log"}},
		{"none", RotateNone,
			[]time.Duration{0, 48 * time.Hour},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clk := newClock(t0)
			f, err := Open(filepath.Join(dir, "app.log"), Options{Rotate: tc.rotate, UTC: true, Clock: clk.Now})
			require.NoError(t, err)
			for i, d := range tc.steps {
				clk.Add(d)
				_, err := f.Write(rec("t", i, 20))
				require.NoError(t, err)
			}
			require.NoError(t, f.Close())
			var names []string
			for _, b := range backupFiles(t, dir, "app-") {
				names = append(names, filepath.Base(b))
			}
			assert.Equal(t, tc.backups, names)
			all := backupFiles(t, dir, "app-")
			assert.Len(t, scanAll(t, append(all, filepath.Join(dir, "app.log"))...), len(tc.steps))
		})
	}
}

func TestRotateExistingFileFromEarlierPeriod(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	require.NoError(t, os.WriteFile(path, []byte("old\n"), 0o644))
	require.NoError(t, os.Chtimes(path, t0.Add(-48*time.Hour), t0.Add(-48*time.Hour)))
	clk := newClock(t0)
	f, err := Open(path, Options{Rotate: RotateDaily, UTC: true, Clock: clk.Now})
	require.NoError(t, err)
	_, err = f.Write([]byte("new\n"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	b := backupFiles(t, dir, "app-")
	require.Len(t, b, 1)
	assert.Equal(t, []string{"old"}, readLines(t, b[0]))
	assert.Equal(t, []string{"new"}, readLines(t, path))
}

func TestBackupNameCollision(t *testing.T) {
	dir := t.TempDir()
	clk := newClock(t0) // never advances: every rotation has the same time
	f, err := Open(filepath.Join(dir, "app.log"), Options{Clock: clk.Now, UTC: true, MaxBackups: 10})
	require.NoError(t, err)
	for i := range 3 {
		_, err := f.Write(rec("c", i, 20))
		require.NoError(t, err)
		require.NoError(t, f.Rotate())
	}
	require.NoError(t, f.Rotate(), "rotating an empty file is a no-op")
	require.NoError(t, f.Close())
	var names []string
	for _, b := range backupFiles(t, dir, "app-") {
		names = append(names, filepath.Base(b))
	}
	assert.Equal(t, []string{
		"app-2025-03-14T10-20-30.000-1.log",
		"app-2025-03-14T10-20-30.000-2.log",
		"app-2025-03-14T10-20-30.000.log",
	}, names)
	list, err := f.backups()
	require.NoError(t, err)
	require.Len(t, list, 3)
	assert.Equal(t, 2, list[0].seq, "newest first")
	assert.Equal(t, 0, list[2].seq)
}

func TestRetention(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxBackups int
		maxAge     time.Duration
		compress   bool
		keep       []int // indexes of the rotations whose backups survive
	}{
		{"MaxBackups", 2, 0, false, []int{3, 4}},
		{"MaxAge", 0, 150 * time.Minute, false, []int{2, 3, 4}},
		{"both", 3, 90 * time.Minute, false, []int{3, 4}},
		{"MaxBackups compressed", 2, 0, true, []int{3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// One file from a foreign pattern must be left alone.
			require.NoError(t, os.WriteFile(filepath.Join(dir, "app-notes.log"), []byte("x\n"), 0o644))
			clk := newClock(t0)
			f, err := Open(filepath.Join(dir, "app.log"), Options{
				Clock: clk.Now, UTC: true, MaxBackups: tc.maxBackups, MaxAge: tc.maxAge, Compress: tc.compress,
			})
			require.NoError(t, err)
			for i := range 5 {
				clk.Add(time.Hour)
				_, err := f.Write(rec("b", i, 20))
				require.NoError(t, err)
				require.NoError(t, f.Rotate())
			}
			// Rotation i happened at t0+(i+1)h; the last retention pass runs
			// after the last rotation, at the final time t0+5h.
			require.NoError(t, f.Close()) // waits for the pending retention pass
			var want []string
			for _, i := range tc.keep {
				name := "app-" + t0.Add(time.Duration(i+1)*time.Hour).Format(backupLayout) + ".log"
				if tc.compress {
					name += ".gz"
				}
				want = append(want, name)
			}
			var got []string
			for _, b := range backupFiles(t, dir, "app-2") {
				got = append(got, filepath.Base(b))
			}
			assert.Equal(t, want, got)
			assert.FileExists(t, filepath.Join(dir, "app-notes.log"))
		})
	}
}
