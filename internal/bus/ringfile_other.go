//go:build !unix || aix

package bus

import "os"

// openRingFile is not available without mmap and flock.
func openRingFile(string, uint64, func(error)) (*ringFile, error) {
	return nil, errRingUnsupported()
}

func (r *ringFile) resize(uint64) error { return ErrRingUnsupported }

func (r *ringFile) close() {}

func filePosition(*os.File) func() (OutputPosition, error) { return nil }

func pathPosition(string) (OutputPosition, error) { return OutputPosition{}, ErrRingUnsupported }

func fileCutter(*os.File) outputCutter { return nil }

func fileReader(*os.File) outputReader { return nil }

func pathReader(string) outputReader { return nil }
