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

func ExampleNewHandler_grpc() {
	// A stand-in for the Collector's OTLP/gRPC receiver: unencrypted
	// HTTP/2, one empty response message, status OK in the trailers.
	var last atomic.Pointer[string]
	collector := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		req := r.Proto + " " + r.Method + " " + r.URL.Path + " " + r.Header.Get("Content-Type")
		last.Store(&req)
		w.Header().Set("Content-Type", "application/grpc")
		_, _ = w.Write([]byte{0, 0, 0, 0, 0})
		w.Header().Set(http.TrailerPrefix+"Grpc-Status", "0")
	}))
	collector.Config.Protocols = new(http.Protocols)
	collector.Config.Protocols.SetUnencryptedHTTP2(true)
	collector.Start()
	defer collector.Close()

	h, err := otlpsink.NewHandler(otlpsink.Options{
		Protocol: otlpsink.ProtocolGRPC, // or OTEL_EXPORTER_OTLP_(LOGS_)PROTOCOL=grpc
		Endpoint: collector.URL,         // http: unencrypted HTTP/2; default localhost:4317
		Resource: []slog.Attr{slog.String("service.name", "checkout")},
	}, &asyncbus.Options{})
	if err != nil {
		panic(err)
	}
	log := slog.New(h)
	log.Info("order placed", "order", 1234)
	log.Warn("stock low", "sku", "A-1", "left", 2)
	if err := h.Close(); err != nil {
		panic(err)
	}
	fmt.Println(*last.Load())
	fmt.Println("written:", h.Stats().Written)
	// Output:
	// HTTP/2.0 POST /opentelemetry.proto.collector.logs.v1.LogsService/Export application/grpc
	// written: 2
}
