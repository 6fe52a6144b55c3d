package filesink

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of options.go: Open refuses options that cannot mean what the user
// wrote, with an error naming the field, and creates nothing.
func TestOpenRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		opts    Options
		wantMsg string
	}{
		{Options{MaxSize: -5}, "MaxSize -5 is negative"},
		{Options{MaxBackups: -1}, "MaxBackups -1 is negative"},
		{Options{MaxAge: -time.Hour}, "MaxAge -1h0m0s is negative"},
		{Options{Preallocate: -1}, "Preallocate -1 is negative"},
		{Options{SyncInterval: -time.Second}, "SyncInterval -1s is negative"},
		{Options{ErrorInterval: -time.Second}, "ErrorInterval -1s is negative"},
		{Options{Rotate: 7}, "Rotate 7 is not RotateNone, RotateHourly or RotateDaily"},
		{Options{Rotate: -1}, "Rotate -1 is not"},
		{Options{Sync: 3}, "Sync 3 is not SyncNever, SyncEveryBatch or SyncInterval"},
		{Options{Perm: os.ModeDir | 0o644}, "Perm drw-r--r-- has bits other than permissions"},
		{Options{DirPerm: os.ModeSticky | 0o700}, "DirPerm"},
	} {
		t.Run(tc.wantMsg, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "logs")
			_, err := Open(filepath.Join(dir, "app.log"), tc.opts)
			require.ErrorContains(t, err, "filesink: "+tc.wantMsg)
			assert.NoDirExists(t, dir, "nothing created")
		})
	}
}

// TestZeroOptionsMeanDefaults: zero values stay valid and mean the
// documented defaults.
func TestZeroOptionsMeanDefaults(t *testing.T) {
	var o Options
	require.NoError(t, o.check())
	o.setDefaults()
	assert.Equal(t, DefaultPerm, o.Perm)
	assert.Equal(t, DefaultDirPerm, o.DirPerm)
	assert.Equal(t, DefaultSyncInterval, o.SyncInterval)
	assert.Equal(t, DefaultErrorInterval, o.ErrorInterval)
	assert.Equal(t, DefaultCheckInterval, o.CheckInterval)
}

// TestEnumsPrintTheirNames: %v of Rotation and SyncPolicy prints the name a
// user writes, not a number.
func TestEnumsPrintTheirNames(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{RotateNone, "RotateNone"},
		{RotateHourly, "RotateHourly"},
		{RotateDaily, "RotateDaily"},
		{Rotation(7), "Rotation(7)"},
		{SyncNever, "SyncNever"},
		{SyncEveryBatch, "SyncEveryBatch"},
		{SyncInterval, "SyncInterval"},
		{SyncPolicy(-1), "SyncPolicy(-1)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, fmt.Sprintf("%v", tt.v))
		})
	}
}
