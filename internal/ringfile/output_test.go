package ringfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeOutput is an output whose calls panic or fail as its fields say.
type fakeOutput struct {
	buf       bytes.Buffer
	panics    bool  // Write, WriteBatch and Sync panic
	short     bool  // Write takes one byte less; WriteBatch takes nothing
	syncErr   error // Sync's answer
	settled   [][]byte
	path      string
	pathPanic bool
}

func (o *fakeOutput) Write(p []byte) (int, error) {
	if o.panics {
		panic("write: boom")
	}
	if o.short {
		p = p[:len(p)-1]
	}
	return o.buf.Write(p)
}

func (o *fakeOutput) Sync() error {
	if o.panics {
		panic("sync: boom")
	}
	return o.syncErr
}

func (o *fakeOutput) SettleTornTail(rec []byte) { o.settled = append(o.settled, rec) }

func (o *fakeOutput) Path() string {
	if o.pathPanic {
		panic("path: boom")
	}
	return o.path
}

// fakeBatchOutput is fakeOutput with a WriteBatch method.
type fakeBatchOutput struct{ *fakeOutput }

func (o fakeBatchOutput) WriteBatch(recs [][]byte) (int, error) {
	if o.panics {
		panic("write: boom")
	}
	if o.short {
		return 0, nil
	}
	for _, r := range recs {
		o.buf.Write(r)
	}
	return len(recs), nil
}

// SetOutput's hooks call the output guarded: a panicking output fails the
// replay's write or sync with an error naming the panic (never the
// process), a short write is io.ErrShortWrite, an output with nothing to
// sync is no failure.
func TestSetOutputGuardsTheOutput(t *testing.T) {
	recs := [][]byte{[]byte("a\n"), []byte("bc\n")}
	for _, tc := range []struct {
		name                string
		out                 *fakeOutput
		batch               bool
		wantWrite, wantSync string // error text; "" for none
		wantBytes           string
	}{
		{name: "write", out: &fakeOutput{}, wantBytes: "a\nbc\n"},
		{name: "batch", out: &fakeOutput{}, batch: true, wantBytes: "a\nbc\n"},
		{name: "write panics", out: &fakeOutput{panics: true}, wantWrite: "the output's write panicked: write: boom", wantSync: "the output's sync panicked: sync: boom"},
		{name: "batch panics", out: &fakeOutput{panics: true}, batch: true, wantWrite: "the output's write panicked: write: boom", wantSync: "the output's sync panicked: sync: boom"},
		{name: "short write", out: &fakeOutput{short: true}, wantWrite: io.ErrShortWrite.Error(), wantBytes: "a\nbc"},
		{name: "batch takes nothing", out: &fakeOutput{short: true}, batch: true, wantWrite: io.ErrShortWrite.Error()},
		{name: "nothing to sync", out: &fakeOutput{syncErr: errors.ErrUnsupported}, wantBytes: "a\nbc\n"},
		{name: "sync fails", out: &fakeOutput{syncErr: errors.New("disk gone")}, wantSync: "disk gone", wantBytes: "a\nbc\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w io.Writer = tc.out
			if tc.batch {
				w = fakeBatchOutput{tc.out}
			}
			var o Options
			o.SetOutput(w)
			require.NotNil(t, o.Write)
			require.NotNil(t, o.Sync)
			require.NotNil(t, o.Settle)
			for _, c := range []struct {
				err  error
				want string
			}{{o.Write(recs), tc.wantWrite}, {o.Sync(), tc.wantSync}} {
				if c.want == "" {
					assert.NoError(t, c.err)
				} else {
					assert.EqualError(t, c.err, c.want)
				}
			}
			assert.Equal(t, tc.wantBytes, tc.out.buf.String())
		})
	}
}

// SetOutput finds the output's file: an *os.File's own hooks, a file
// output's by its path (no cutter: it repairs its own tail), none for a
// path that is blank or whose Path panics; and a torn-tail holder is
// settled through it.
func TestSetOutputFindsTheFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
	require.NoError(t, err)
	defer f.Close()
	var o Options
	o.SetOutput(f)
	assert.Nil(t, o.Settle, "an *os.File holds no torn-tail report")
	assert.Equal(t, FilePosition(f) != nil, o.Position != nil)
	assert.Equal(t, FileCutter(f) != nil, o.Cut != nil)

	byPath := &fakeOutput{path: f.Name()}
	o.SetOutput(byPath)
	assert.Equal(t, PathReader(f.Name()) != nil, o.Read != nil)
	assert.Nil(t, o.Cut)
	o.Settle([]byte("rec\n"))
	SettleTornTail(byPath)
	assert.Equal(t, [][]byte{[]byte("rec\n"), nil}, byPath.settled)

	for _, out := range []*fakeOutput{{path: " "}, {path: f.Name(), pathPanic: true}} {
		o.SetOutput(out)
		assert.Nil(t, o.Position)
		assert.Nil(t, o.Read)
		assert.Nil(t, o.Cut)
	}
}
