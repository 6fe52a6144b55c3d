//go:build !unix || aix

package ringfile

import "os"

// openRingFile is not available without mmap and flock.
func openRingFile(string, uint64, *Options) (*File, error) {
	return nil, errUnsupported()
}

func (r *File) resize(uint64) error { return ErrUnsupported }

func (r *File) close() {}

// FilePosition is nil without mmap and flock: no ring file to recover.
func FilePosition(*os.File) func() (Position, error) { return nil }

// PathPosition fails without mmap and flock.
func PathPosition(string) (Position, error) { return Position{}, ErrUnsupported }

// FileCutter is nil without mmap and flock.
func FileCutter(*os.File) Cutter { return nil }

// FileReader is nil without mmap and flock.
func FileReader(*os.File) Reader { return nil }

// PathReader is nil without mmap and flock.
func PathReader(string) Reader { return nil }
