package benchmarks

// asyncbus otlpsink over OTLP/gRPC against the OpenTelemetry SDK path
// (otelslog → sdk/log BatchProcessor → otlploggrpc), both into the same
// local grpc-go LogsService server. Run the rounds interleaved, one
// process per round (each runs both contestants):
//
//	go test -c -o /tmp/bench.test ./ && for i in 1 2 3 4 5 6; do
//	  /tmp/bench.test -test.run XX -test.bench 'OTLPGRPC$' -test.benchtime 100000x; done
//
// cpu-ns/rec is process CPU (user+system, from getrusage) per record
// logged; it includes the in-process server's work, which counts the
// records of each raw request message with protowire, as the OTLP/HTTP
// receiver does (no unmarshalling into Go structs, which would cost more
// than either client): the same for both contestants per record received.
// BenchmarkOTLPGRPC logs as fast as it can (the SDK's BatchProcessor then
// drops records: lost/op); BenchmarkOTLPGRPCPaced logs at a steady rate
// both keep up with, so both deliver every record.

import (
	"context"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otlpsink"
)

// grpcLogsReceiver counts the LogRecords of every Export call.
type grpcLogsReceiver struct {
	records, calls atomic.Int64
}

// rawCodec hands the server the request message as bytes, and sends a
// response message given as bytes.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append((*v.(*[]byte))[:0], data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// logsServiceDesc is LogsService with Export counting records.
var logsServiceDesc = grpc.ServiceDesc{
	ServiceName: "opentelemetry.proto.collector.logs.v1.LogsService",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Export", Handler: func(srv any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		var req []byte
		if err := dec(&req); err != nil {
			return nil, err
		}
		n, ok := countLogRecords(req)
		if !ok {
			return nil, status.Error(codes.InvalidArgument, "malformed")
		}
		srv.(*grpcLogsReceiver).records.Add(int64(n))
		srv.(*grpcLogsReceiver).calls.Add(1)
		empty := []byte{} // ExportLogsServiceResponse{}
		return &empty, nil
	}}},
}

// newGRPCLogsReceiver serves a grpcLogsReceiver with grpc-go on a
// loopback port until the benchmark ends, and returns it with its address.
func newGRPCLogsReceiver(b *testing.B) (*grpcLogsReceiver, string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	rc := &grpcLogsReceiver{}
	srv := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}))
	srv.RegisterService(&logsServiceDesc, rc)
	go func() { _ = srv.Serve(l) }()
	b.Cleanup(srv.Stop)
	return rc, l.Addr().String()
}

// otlpsinkGRPC is the asyncbus contestant with the handler's MaxLatency
// (0: the default, 20 ms).
func otlpsinkGRPC(maxLatency time.Duration) func(b *testing.B, addr string) (*slog.Logger, func()) {
	return func(b *testing.B, addr string) (*slog.Logger, func()) {
		h, err := otlpsink.NewHandler(otlpsink.Options{
			Protocol: otlpsink.ProtocolGRPC, Endpoint: "http://" + addr,
			Headers: map[string]string{}, Compression: "none",
			Resource: []slog.Attr{slog.String("service.name", "bench")},
		}, &asyncbus.Options{OnError: func(error) {}, Ring: asyncbus.RingOptions{MaxLatency: maxLatency}})
		if err != nil {
			b.Fatal(err)
		}
		return slog.New(h), func() {
			if err := h.Close(); err != nil {
				b.Error(err)
			}
		}
	}
}

var otlpGRPCContestants = []otlpContestant{
	{"asyncbus-otlpsink-grpc", otlpsinkGRPC(0)},
	{"otelslog-BatchProcessor-otlploggrpc", func(b *testing.B, addr string) (*slog.Logger, func()) {
		exp, err := otlploggrpc.New(context.Background(), otlploggrpc.WithEndpoint(addr), otlploggrpc.WithInsecure())
		if err != nil {
			b.Fatal(err)
		}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
		return slog.New(otelslog.NewHandler("bench", otelslog.WithLoggerProvider(lp))), func() {
			if err := lp.Shutdown(context.Background()); err != nil {
				b.Error(err)
			}
		}
	}},
}

// BenchmarkOTLPGRPC: caller cost (ns/op, allocs/op) and process CPU per
// record, delivered into the grpc-go server; lost/op is records not
// received.
func BenchmarkOTLPGRPC(b *testing.B) {
	ctx := context.Background()
	for _, c := range otlpGRPCContestants {
		b.Run(c.name, func(b *testing.B) {
			rc, addr := newGRPCLogsReceiver(b)
			l, done := c.make(b, addr)
			cpu0 := cpuNow()
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				logReference(l, ctx, i)
				i++
			}
			b.StopTimer()
			done()
			cpu := cpuNow() - cpu0
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(i), "cpu-ns/rec")
			b.ReportMetric(float64(int64(i)-rc.records.Load())/float64(i), "lost/op")
		})
	}
}

// BenchmarkOTLPGRPCPaced logs 20,000 records at 10,000 records/s (paced
// by a millisecond ticker) and reports process CPU per record and the
// records lost, and the Export calls made (run with -benchtime 1x).
func BenchmarkOTLPGRPCPaced(b *testing.B) {
	const (
		rate  = 10000
		total = 2 * rate
	)
	ctx := context.Background()
	floor := otlpContestant{"floor-discard", func(b *testing.B, _ string) (*slog.Logger, func()) {
		return slog.New(slog.DiscardHandler), func() {}
	}}
	// The SDK's BatchProcessor exports every second (or 512 records):
	// asyncbus with a MaxLatency of a second batches alike.
	batched := otlpContestant{"asyncbus-otlpsink-grpc-MaxLatency1s", otlpsinkGRPC(time.Second)}
	for _, c := range append([]otlpContestant{floor, batched}, otlpGRPCContestants...) {
		b.Run(c.name, func(b *testing.B) {
			var cpu time.Duration
			var lost, calls int64
			for b.Loop() {
				rc, addr := newGRPCLogsReceiver(b)
				l, done := c.make(b, addr)
				cpu0 := cpuNow()
				start := time.Now()
				tick := time.NewTicker(time.Millisecond)
				for i := 0; i < total; {
					<-tick.C
					for due := int(time.Since(start).Seconds() * rate); i < due && i < total; i++ {
						logReference(l, ctx, i)
					}
				}
				tick.Stop()
				done()
				cpu = cpuNow() - cpu0
				lost, calls = total-rc.records.Load(), rc.calls.Load()
				if c.name == floor.name {
					lost = 0 // nothing is sent
				}
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/total, "cpu-ns/rec")
			b.ReportMetric(float64(lost), "lost")
			b.ReportMetric(float64(calls), "calls")
		})
	}
}
