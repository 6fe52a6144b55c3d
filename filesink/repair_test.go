package filesink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of repair.go: the torn-tail repair at Open, its side file, and when
// it is reported (SettleTornTail).

func TestTornTailRepair(t *testing.T) {
	long := strings.Repeat("y", 3*repairChunk) // the search crosses chunks
	for _, tc := range []struct {
		name, content, wantLog, wantSide string
	}{
		{"clean", "a\nb\n", "a\nb\n", ""},
		{"empty", "", "", ""},
		{"half a line", "a\nb\n{\"seq\":3,\"ms", "a\nb\n", "{\"seq\":3,\"ms"},
		{"no newline at all", "torn", "", "torn"},
		{"long fragment", "a\n" + long, "a\n", long},
		{"newline far back", long + "\n" + long, long + "\n", long},
		{"zero tail", "a\n\x00\x00\x00", "a\n", "\x00\x00\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			var errs errSink
			f, err := Open(path, Options{OnError: errs.On, Clock: newClock(t0).Now, UTC: true})
			require.NoError(t, err)
			_, err = f.Write([]byte("next\n"))
			require.NoError(t, err)
			r := f.Repaired()
			require.NoError(t, f.Close())
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.wantLog+"next\n", string(b))
			if tc.wantSide == "" {
				assert.Nil(t, r)
				assert.Empty(t, errs.All())
				return
			}
			require.NotNil(t, r)
			assert.Equal(t, &TailRepair{
				Path:     path,
				Offset:   int64(len(tc.wantLog)),
				Fragment: int64(len(tc.wantSide)),
				SideFile: path + ".torn-2025-03-14T10-20-30.000",
			}, r)
			side, err := os.ReadFile(r.SideFile)
			require.NoError(t, err)
			assert.Equal(t, tc.wantSide, string(side))
			require.Len(t, errs.All(), 1)
			var got *TailRepair
			require.ErrorAs(t, errs.All()[0], &got)
			assert.Equal(t, r, got)
			assert.Contains(t, got.Error(), "torn")
		})
	}
}

func TestTornTailSideFileCollision(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	clk := newClock(t0)
	for i := range 2 {
		require.NoError(t, os.WriteFile(path, []byte("ok\ntorn"), 0o644))
		f, err := Open(path, Options{OnError: func(error) {}, Clock: clk.Now, UTC: true})
		require.NoError(t, err)
		want := path + ".torn-2025-03-14T10-20-30.000"
		if i == 1 {
			want += "-1"
		}
		assert.Equal(t, want, f.Repaired().SideFile)
		require.NoError(t, f.Close())
	}
}

// The torn-tail report is held until the File's first use, so a durable
// ring that writes the torn record again first can say so (SettleTornTail):
// then nothing is reported and the side file goes; otherwise it is reported
// exactly once.
func TestTornTailReportSettledOnce(t *testing.T) {
	whole := []byte(`{"msg":"wörk","seq":7}` + "\n")
	for _, tc := range []struct {
		name     string
		settle   []byte
		replayed bool
	}{
		{"replay covers it", whole, true},
		{"replay is another record", []byte(`{"msg":"other"}` + "\n"), false},
		{"no replay", nil, false},
		{"first use is a write", []byte("unused"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			require.NoError(t, os.WriteFile(path, append([]byte("ok\n"), whole[:9]...), 0o644))
			var errs errSink
			f, err := Open(path, Options{OnError: errs.On})
			require.NoError(t, err)
			assert.Empty(t, errs.All(), "held until the first use")
			side := f.Repaired().SideFile
			if tc.name == "first use is a write" {
				_, err = f.Write([]byte("x\n"))
				require.NoError(t, err)
			}
			f.SettleTornTail(tc.settle)
			f.SettleTornTail(nil) // only the first call counts
			_, err = f.Write(whole)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			assert.Equal(t, tc.replayed, f.Repaired().Replayed)
			if tc.replayed {
				assert.Empty(t, errs.All())
				assert.NoFileExists(t, side)
				return
			}
			require.Len(t, errs.All(), 1)
			var tr *TailRepair
			require.ErrorAs(t, errs.All()[0], &tr)
			assert.FileExists(t, side)
		})
	}
}
