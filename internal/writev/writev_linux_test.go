//go:build linux

package writev

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// New takes an *os.File (a syscall.Conn) and refuses a plain io.Writer.
func TestNew(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	assert.NotNil(t, New(w))
	assert.Nil(t, New(&bytes.Buffer{}))
	require.NoError(t, w.Close())
}

// Write writes the views from (idx, off) on, at most Max of them per call,
// skipping empty ones, and says where the next call starts; with nothing
// left it makes no call.
func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		name       string
		views      [][]byte
		idx, off   int
		want       string
		wantIdx    int
		wantOff    int
		wantNoCall bool
	}{
		{name: "all", views: [][]byte{[]byte("ab"), nil, []byte("cd")}, want: "abcd", wantIdx: 3},
		{name: "from an offset", views: [][]byte{[]byte("ab"), []byte("cde")}, idx: 1, off: 1, want: "de", wantIdx: 2},
		{name: "only empty or done", views: [][]byte{[]byte("ab"), nil}, idx: 0, off: 2, wantIdx: 2, wantNoCall: true},
		{name: "Max a call", views: bytes.SplitAfter(bytes.Repeat([]byte("x\n"), Max+5), []byte("\n"))[:Max+5], want: string(bytes.Repeat([]byte("x\n"), Max)), wantIdx: Max},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer r.Close()
			got := make(chan []byte)
			go func() {
				b, _ := io.ReadAll(r)
				got <- b
			}()
			wv := New(w)
			require.NotNil(t, wv)
			idx, off, called, err := wv.Write(tc.views, tc.idx, tc.off)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			assert.Equal(t, tc.want, string(<-got))
			assert.Equal(t, !tc.wantNoCall, called)
			assert.Equal(t, tc.wantIdx, idx)
			assert.Equal(t, tc.wantOff, off)
		})
	}
}

// A call that fails writes nothing and reports the error, the position
// unmoved.
func TestWriteFails(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	wv := New(w)
	require.NotNil(t, wv)
	require.NoError(t, r.Close()) // EPIPE
	idx, off, called, err := wv.Write([][]byte{[]byte("ab")}, 0, 0)
	require.Error(t, err)
	assert.True(t, called)
	assert.Equal(t, 0, idx)
	assert.Equal(t, 0, off)
	require.NoError(t, w.Close())
}
