package filesink

import "os"

// truncateReopening sets file's size, through a second, write-only handle on
// the same file when file's own handle is not allowed to: on Windows an
// O_APPEND handle lacks the right to set the end of the file. It returns the
// first error when the path no longer names file.
func truncateReopening(file *os.File, size int64) error {
	err := file.Truncate(size)
	if err == nil {
		return nil
	}
	w, oerr := os.OpenFile(file.Name(), os.O_WRONLY, 0)
	if oerr != nil {
		return err
	}
	defer w.Close()
	a, aerr := file.Stat()
	b, berr := w.Stat()
	if aerr != nil || berr != nil || !os.SameFile(a, b) {
		return err
	}
	return w.Truncate(size)
}
