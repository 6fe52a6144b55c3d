package filesink

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of truncate.go: a handle that may not truncate (read-only here, as
// an O_APPEND handle is on Windows) is truncated through a second handle on
// the same file, and never through a file that replaced it at the path.
func TestTruncateReopening(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replace  bool // the path names another file by the time of the cut
		wantErr  bool
		wantSize int64
	}{
		{"the handle cannot, a second one does", false, false, 4},
		{"the path was replaced: nothing cut", true, true, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			require.NoError(t, os.WriteFile(path, []byte("0123456789"), 0o600))
			ro, err := os.Open(path)
			require.NoError(t, err)
			defer ro.Close()
			require.Error(t, ro.Truncate(4), "a read-only handle may not truncate")
			if tc.replace {
				require.NoError(t, os.Rename(path, path+".old"))
				require.NoError(t, os.WriteFile(path, []byte("new file!!"), 0o600))
			}
			err = truncateReopening(ro, 4)
			if tc.wantErr {
				assert.Error(t, err)
			} else {
				assert.NoError(t, err)
			}
			fi, err := ro.Stat()
			require.NoError(t, err)
			assert.Equal(t, tc.wantSize, fi.Size())
			if tc.replace {
				b, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, "new file!!", string(b), "the other file is untouched")
			}
		})
	}
}
