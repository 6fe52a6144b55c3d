package filesink_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/filesink"
)

// A rotating file behind an asyncbus handler: the handler writes whole
// batches to it, and Close on both leaves every record in the file.
func Example() {
	dir, _ := os.MkdirTemp("", "filesink-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.log")

	f, err := filesink.Open(path, filesink.Options{MaxSize: 64 << 20, MaxBackups: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	h := asyncbus.NewHandler(f, &asyncbus.Options{Format: asyncbus.Logfmt,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{} // stable output for the example
			}
			return a
		}})
	slog.New(h).Info("started", "port", 8080)
	slog.New(h).Warn("disk almost full", "free_mb", 120)
	_ = h.Close() // writes and syncs everything handled so far
	_ = f.Close()

	data, _ := os.ReadFile(path)
	fmt.Print(string(data))
	// Output:
	// level=info msg=started port=8080
	// level=warn msg="disk almost full" free_mb=120
}

// One File per path: while a File has the log open, a second Open of the
// same path, in this or another process, fails with ErrLocked.
func ExampleErrLocked() {
	dir, _ := os.MkdirTemp("", "filesink-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.log")

	first, err := filesink.Open(path, filesink.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = filesink.Open(path, filesink.Options{})
	fmt.Println(errors.Is(err, filesink.ErrLocked))

	_ = first.Close() // releases the path
	second, err := filesink.Open(path, filesink.Options{})
	fmt.Println(err)
	_ = second.Close()
	// Output:
	// true
	// <nil>
}
