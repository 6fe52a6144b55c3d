package otlpsink_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otlpsink"
)

// Several outputs, each with its own format and level, through
// slog.NewMultiHandler: a console for people, a JSON file for the record,
// OTLP for warnings and above. Each asyncbus handler keeps its own ring
// and drainer, so a slow output holds back none of the others.
func Example_fanOut() {
	dir, _ := os.MkdirTemp("", "fanout")
	defer os.RemoveAll(dir)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // a stand-in for the Collector
	}))
	defer collector.Close()

	// In a program the console is os.Stderr; stdout here, for the example's check.
	console := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{
		Format: asyncbus.Console, Encoding: asyncbus.EncodingOptions{Color: asyncbus.ColorNever}, Level: slog.LevelDebug, ReplaceAttr: dropTime,
	})
	f, err := os.Create(filepath.Join(dir, "app.log"))
	if err != nil {
		panic(err)
	}
	file := asyncbus.NewHandler(f, &asyncbus.Options{Level: slog.LevelInfo, ReplaceAttr: dropTime})
	sink, err := otlpsink.NewSink(otlpsink.Options{Endpoint: collector.URL})
	if err != nil {
		panic(err)
	}
	otlp, err := sink.NewHandler(&asyncbus.Options{Level: slog.LevelWarn})
	if err != nil {
		panic(err)
	}

	log := slog.New(slog.NewMultiHandler(console, file, otlp))
	log.Debug("cache miss", "key", "u-17")
	log.Info("request handled", "status", 200)
	log.Warn("slow request", "ms", 1500)

	// Close every handler once nothing logs any more (asyncbus.CloseDefault
	// cannot see inside a MultiHandler), then the file under its handler.
	// Each Close flushes its own output; join their errors.
	if err := errors.Join(console.Close(), file.Close(), otlp.Close(), f.Close()); err != nil {
		panic(err)
	}
	written, _ := os.ReadFile(f.Name())
	fmt.Print(string(written))
	fmt.Println("collector got:", sink.Stats().Sent)
	// Output:
	// DEBUG cache miss key=u-17
	// INFO  request handled status=200
	// WARN  slow request ms=1500
	// {"level":"INFO","msg":"request handled","status":200}
	// {"level":"WARN","msg":"slow request","ms":1500}
	// collector got: 1
}

// dropTime removes the time from the example's output, so that it is the
// same on every run.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey && len(groups) == 0 {
		return slog.Attr{}
	}
	return a
}
