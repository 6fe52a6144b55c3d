package filesink

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// Rotation selects time-based rotation of the log file.
type Rotation int

const (
	// RotateNone disables time-based rotation (size-based rotation still
	// applies when Options.MaxSize is set).
	RotateNone Rotation = iota
	// RotateHourly starts a new file at the first write of every hour.
	RotateHourly
	// RotateDaily starts a new file at the first write of every day
	// (midnight in local time, or in UTC with Options.UTC).
	RotateDaily
)

// String returns r's name as it is written in Go ("RotateDaily"), or
// "Rotation(N)" for a value that is not a rotation.
func (r Rotation) String() string {
	switch r {
	case RotateNone:
		return "RotateNone"
	case RotateHourly:
		return "RotateHourly"
	case RotateDaily:
		return "RotateDaily"
	}
	return "Rotation(" + strconv.Itoa(int(r)) + ")"
}

// SyncPolicy selects when written data is flushed to stable storage with
// fdatasync. File.Sync always syncs, whatever the policy.
type SyncPolicy int

const (
	// SyncNever leaves durability to the operating system (and to explicit
	// File.Sync calls, which the bus issues on Flush).
	SyncNever SyncPolicy = iota
	// SyncEveryBatch calls fdatasync after every Write and WriteBatch.
	SyncEveryBatch
	// SyncInterval calls fdatasync at most every Options.SyncInterval while
	// there is unsynced data, also when no more writes arrive.
	SyncInterval
)

// String returns p's name as it is written in Go ("SyncEveryBatch"), or
// "SyncPolicy(N)" for a value that is not a policy.
func (p SyncPolicy) String() string {
	switch p {
	case SyncNever:
		return "SyncNever"
	case SyncEveryBatch:
		return "SyncEveryBatch"
	case SyncInterval:
		return "SyncInterval"
	}
	return "SyncPolicy(" + strconv.Itoa(int(p)) + ")"
}

// Defaults used for zero Options fields.
const (
	// DefaultPerm is the mode of new log files: readable and writable by
	// the owner only, as lumberjack does, since logs carry request data and
	// personal data. Options.Perm widens it (0o640 for a log-reading group).
	DefaultPerm os.FileMode = 0o600
	// DefaultDirPerm is the mode of directories Open creates: the owner's
	// only. Options.DirPerm widens it.
	DefaultDirPerm os.FileMode = 0o700
	// DefaultSyncInterval is the SyncInterval period: 1 s.
	DefaultSyncInterval = time.Second
	// DefaultErrorInterval is the minimum gap between two OnError calls for
	// write errors.
	DefaultErrorInterval = time.Second
	// DefaultCheckInterval is how often the path is checked for having been
	// renamed, deleted or truncated underneath the open file.
	DefaultCheckInterval = time.Second
)

// Options configures Open. The zero value is a plain append-only file with no
// rotation, no fsync and no preallocation.
type Options struct {
	// Perm is the mode of a log file Open creates; default 0o600 (the
	// process's umask applies, as for os.OpenFile). A file that exists
	// keeps its mode, and each rotation creates the new file with the mode
	// of the one it replaces, so a chmod by an administrator lasts. On
	// Windows only the owner-write bit means anything (read-only or not).
	Perm os.FileMode
	// DirPerm is the mode of missing parent directories Open creates;
	// default 0o700.
	DirPerm os.FileMode

	// MaxSize rotates the file before a write that would make it larger than
	// MaxSize bytes. A single batch larger than MaxSize still goes into one
	// (fresh) file: records are never split. Zero disables size rotation.
	// If the rename of a rotation fails (an immutable or read-only
	// directory), the file keeps taking the records past MaxSize, the
	// failure is reported once to OnError, and rotation is tried again
	// after another MaxSize bytes (or at the next period for Rotate).
	MaxSize int64
	// Rotate enables hourly or daily rotation.
	Rotate Rotation
	// UTC uses UTC instead of local time for period boundaries and backup
	// names.
	UTC bool
	// MaxBackups keeps at most this many rotated files; zero keeps all.
	MaxBackups int
	// MaxAge removes rotated files whose timestamp is older than MaxAge;
	// zero keeps them regardless of age.
	MaxAge time.Duration
	// Compress gzips rotated files in a background goroutine.
	Compress bool
	// Symlink, if set, is maintained as a symbolic link to the log file.
	Symlink string

	// Sync is the fdatasync policy.
	Sync SyncPolicy
	// SyncInterval is the period for SyncInterval; default 1 s.
	SyncInterval time.Duration
	// Preallocate reserves disk space in chunks of this many bytes with
	// fallocate(FALLOC_FL_KEEP_SIZE) ahead of the writes (1–4 MiB suits
	// most loads). The file size is unaffected, so a crash leaves no zero
	// tail; unused blocks are released on rotation and Close. Zero disables.
	// A failure is reported to OnError; preallocation is then turned off if
	// the file system cannot do it at all (EOPNOTSUPP, ENOSYS, EINVAL), and
	// otherwise (out of space, say) tried again at the next chunk.
	Preallocate int64

	// OnError receives background events only: errors of compression,
	// retention, periodic syncs, preallocation, rotation and of reopening the
	// path after logrotate moved it, a file system without locks (see Open),
	// a pending cut back given up because another program appended to the
	// file (see File.Write) (rate-limited to one call per
	// ErrorInterval, with a count of the suppressed ones) and the *TailRepair
	// of a torn-tail repair (at the first use of the File, unless the
	// asyncbus durable ring writes the torn record again whole; see
	// File.SettleTornTail). Errors of Write, WriteBatch and Sync are
	// returned to the caller, not passed here: the asyncbus handler reports
	// each once, through its own Options.OnError. It is never called with
	// the File's lock held, so it may log. Nil prints to os.Stderr.
	OnError func(error)
	// ErrorInterval is the minimum gap between OnError calls; default 1 s.
	ErrorInterval time.Duration
	// CheckInterval is how often a write first checks that the path still
	// names the open file (reopening it after logrotate renamed or deleted
	// it, or noticing a truncation); default 1 s, negative disables. A write
	// error always triggers the check.
	CheckInterval time.Duration

	// Clock returns the current time; default time.Now. Tests inject it.
	Clock func() time.Time

	// testTick replaces the SyncInterval ticker (tests only).
	testTick <-chan time.Time
	// testTickDone receives after each tick has been handled (tests only).
	testTickDone chan<- struct{}
}

func (o *Options) setDefaults() {
	if o.Perm == 0 {
		o.Perm = DefaultPerm
	}
	if o.DirPerm == 0 {
		o.DirPerm = DefaultDirPerm
	}
	if o.SyncInterval <= 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if o.ErrorInterval <= 0 {
		o.ErrorInterval = DefaultErrorInterval
	}
	if o.CheckInterval == 0 {
		o.CheckInterval = DefaultCheckInterval
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
}

// check returns the error for options Open refuses, before defaults are
// applied: negative sizes, counts and durations (zero means the default or
// "off" for each), and Rotate or Sync values that name no policy.
func (o *Options) check() error {
	for _, c := range []struct {
		name string
		bad  bool
		val  any
	}{
		{"MaxSize", o.MaxSize < 0, o.MaxSize},
		{"MaxBackups", o.MaxBackups < 0, o.MaxBackups},
		{"MaxAge", o.MaxAge < 0, o.MaxAge},
		{"Preallocate", o.Preallocate < 0, o.Preallocate},
		{"SyncInterval", o.SyncInterval < 0, o.SyncInterval},
		{"ErrorInterval", o.ErrorInterval < 0, o.ErrorInterval},
	} {
		if c.bad {
			return fmt.Errorf("filesink: %s %v is negative (zero is the default)", c.name, c.val)
		}
	}
	if o.Rotate < RotateNone || o.Rotate > RotateDaily {
		return fmt.Errorf("filesink: Rotate %d is not RotateNone, RotateHourly or RotateDaily", int(o.Rotate))
	}
	if o.Sync < SyncNever || o.Sync > SyncInterval {
		return fmt.Errorf("filesink: Sync %d is not SyncNever, SyncEveryBatch or SyncInterval", int(o.Sync))
	}
	if o.Perm&^fs.ModePerm != 0 {
		return fmt.Errorf("filesink: Perm %v has bits other than permissions", o.Perm)
	}
	if o.DirPerm&^fs.ModePerm != 0 {
		return fmt.Errorf("filesink: DirPerm %v has bits other than permissions", o.DirPerm)
	}
	return nil
}
