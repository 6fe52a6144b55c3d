//go:build !unix || aix

package bus

import "os"

// openRingFile is not available without mmap and flock.
func openRingFile(string, uint64, func(error)) (*ringFile, error) {
	return nil, errRingUnsupported()
}

func (r *ringFile) resize(uint64) error { return ErrRingUnsupported }

func (r *ringFile) close() {}

func filePosition(*os.File) func() (SinkPosition, error) { return nil }

func pathPosition(string) (SinkPosition, error) { return SinkPosition{}, ErrRingUnsupported }

func fileCutter(*os.File) sinkCutter { return nil }

func fileReader(*os.File) sinkReader { return nil }

func pathReader(string) sinkReader { return nil }
