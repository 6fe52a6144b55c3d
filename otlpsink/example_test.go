package otlpsink_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otlpsink"
)

func ExampleNewHandler() {
	// A stand-in for the Collector's OTLP/HTTP receiver.
	var last atomic.Pointer[string]
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		req := r.Method + " " + r.URL.Path + " " + r.Header.Get("Content-Type")
		last.Store(&req)
	}))
	defer collector.Close()

	s, err := otlpsink.NewSink(otlpsink.Options{
		Endpoint: collector.URL, // "/v1/logs" is appended
		Resource: []slog.Attr{slog.String("service.name", "checkout")},
	})
	if err != nil {
		panic(err)
	}
	h, err := s.NewHandler(&asyncbus.Options{})
	if err != nil {
		panic(err)
	}
	log := slog.New(h)
	log.Info("order placed", "order", 1234, slog.Group("user", "id", "u-17"))
	log.Warn("stock low", "sku", "A-1", "left", 2)
	if err := h.Close(); err != nil {
		panic(err)
	}
	fmt.Println(*last.Load())
	fmt.Println("sent:", s.Stats().Sent, "written:", h.Stats().Written)
	// Output:
	// POST /v1/logs application/x-protobuf
	// sent: 2 written: 2
}
