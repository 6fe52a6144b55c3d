//go:build collector

package integration

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otlpsink"
)

// grpcLogsServer is a grpc-go LogsServiceServer that keeps the seq
// attribute of every record it accepts, in arrival order; while down it
// answers UNAVAILABLE.
type grpcLogsServer struct {
	collogspb.UnimplementedLogsServiceServer
	mu       sync.Mutex
	seqs     []int64
	down     atomic.Bool
	refusals atomic.Int64
}

func (s *grpcLogsServer) Export(_ context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	if s.down.Load() {
		s.refusals.Add(1)
		return nil, status.Error(codes.Unavailable, "outage")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			for _, r := range sl.GetLogRecords() {
				seq := int64(-1)
				for _, kv := range r.GetAttributes() {
					if kv.GetKey() == "seq" {
						seq = kv.GetValue().GetIntValue()
					}
				}
				s.seqs = append(s.seqs, seq)
			}
		}
	}
	return &collogspb.ExportLogsServiceResponse{}, nil
}

func (s *grpcLogsServer) received() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.seqs...)
}

// outageTarget is a gRPC collector the outage test can start, stop and
// make refuse calls (UNAVAILABLE).
type outageTarget struct {
	start    func()     // listen on the test's address
	stop     func()     // stop gracefully: calls in flight are answered
	setDown  func(bool) // refuse calls with UNAVAILABLE, or accept them again
	refusals func() int64
	seqs     func() []int64 // the seq of every record received, in order
}

func grpcGoTarget(t *testing.T, addr string) outageTarget {
	impl := &grpcLogsServer{}
	var srv *grpc.Server
	tg := outageTarget{
		setDown:  impl.down.Store,
		refusals: impl.refusals.Load,
		seqs:     impl.received,
	}
	tg.start = func() {
		l, err := net.Listen("tcp", addr)
		require.NoError(t, err)
		srv = grpc.NewServer()
		collogspb.RegisterLogsServiceServer(srv, impl)
		go func() { _ = srv.Serve(l) }()
	}
	tg.stop = func() { srv.GracefulStop() }
	return tg
}

func collectorTarget(t *testing.T, addr string) outageTarget {
	sink := new(consumertest.LogsSink)
	var down atomic.Bool
	var refusals atomic.Int64
	next, err := consumer.NewLogs(func(ctx context.Context, ld plog.Logs) error {
		if down.Load() {
			refusals.Add(1)
			return errors.New("pipeline down") // not permanent: the receiver answers UNAVAILABLE
		}
		return sink.ConsumeLogs(ctx, ld)
	})
	require.NoError(t, err)
	var stop func()
	return outageTarget{
		start:    func() { stop = startGRPCReceiverAt(t, next, addr) },
		stop:     func() { stop() },
		setDown:  down.Store,
		refusals: refusals.Load,
		seqs: func() []int64 {
			var out []int64
			for _, r := range logRecords(sink) {
				v, _ := r.Attributes().Get("seq")
				out = append(out, v.Int())
			}
			return out
		},
	}
}

// startGRPCReceiverAt runs otlpreceiver (gRPC only) on addr and returns
// its shutdown.
func startGRPCReceiverAt(t *testing.T, next consumer.Logs, addr string) func() {
	t.Helper()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	grpcCfg := cfg.Protocols.GRPC.GetOrInsertDefault()
	grpcCfg.NetAddr.Endpoint = addr
	cfg.Protocols.GRPC = configoptional.Some(*grpcCfg)
	cfg.Protocols.HTTP = configoptional.None[otlpreceiver.HTTPConfig]()
	rcv, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, next)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
	var once sync.Once
	stop := func() { once.Do(func() { require.NoError(t, rcv.Shutdown(context.Background())) }) }
	t.Cleanup(stop)
	return stop
}

// TestOTLPSinkGRPCOutageAndRestarts: otlpsink over gRPC into a grpc-go
// LogsService server and into the Collector's gRPC receiver, through an
// outage (every call refused with UNAVAILABLE) and two restarts of the
// server (records logged while nothing listens): every record arrives
// exactly once, in order.
func TestOTLPSinkGRPCOutageAndRestarts(t *testing.T) {
	for name, target := range map[string]func(*testing.T, string) outageTarget{
		"grpc-go":   grpcGoTarget,
		"Collector": collectorTarget,
	} {
		t.Run(name, func(t *testing.T) {
			addr := freeAddr(t)
			tg := target(t, addr)
			tg.start()
			s, err := otlpsink.NewSink(otlpsink.Options{
				Protocol: otlpsink.ProtocolGRPC, Endpoint: "http://" + addr, Compression: "gzip",
				RetryInitial: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond,
			})
			require.NoError(t, err)
			h, err := s.NewHandler(&asyncbus.Options{OnError: func(err error) { t.Log(err) }})
			require.NoError(t, err)
			log := slog.New(h)
			seq := 0
			logSome := func() {
				for range 1000 {
					log.Info("rec", "seq", seq)
					seq++
				}
			}
			flush := func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				require.NoError(t, h.FlushContext(ctx))
			}
			logSome()
			flush()

			// Outage: the server answers UNAVAILABLE until it has refused three calls.
			tg.setDown(true)
			logSome()
			require.Eventually(t, func() bool { return tg.refusals() >= 3 }, time.Minute, time.Millisecond)
			tg.setDown(false)
			flush()

			// Two restarts: records logged while nothing listens wait in the ring.
			for range 2 {
				tg.stop()
				retries := s.Stats().Retries
				logSome()
				require.Eventually(t, func() bool { return s.Stats().Retries >= retries+2 }, time.Minute, time.Millisecond)
				tg.start()
				flush()
			}
			logSome()
			require.NoError(t, h.Close())

			got := tg.seqs()
			want := make([]int64, seq)
			for i := range want {
				want[i] = int64(i)
			}
			require.Equal(t, want, got, "every record once, in order")
			hs, st := h.Stats(), s.Stats()
			assert.EqualValues(t, seq, hs.Written)
			assert.Zero(t, hs.Failed+hs.Dropped)
			assert.EqualValues(t, seq, st.Sent)
			assert.Zero(t, st.FailedRecords)
			assert.GreaterOrEqual(t, st.Retries, uint64(3+2*2))
		})
	}
}

// TestOTLPSinkGRPCLargeBacklog: 8 MiB of records queued during an outage,
// drained in batches of over 4 MiB, uncompressed, reach a grpc-go server
// with its default 4 MiB message limit: the batches are split into
// requests it accepts.
func TestOTLPSinkGRPCLargeBacklog(t *testing.T) {
	addr := freeAddr(t)
	tg := grpcGoTarget(t, addr)
	tg.start()
	t.Cleanup(tg.stop)
	tg.setDown(true) // the records pile up in the ring, drained in one batch
	s, err := otlpsink.NewSink(otlpsink.Options{
		Protocol: otlpsink.ProtocolGRPC, Endpoint: "http://" + addr, Compression: "none",
		RetryInitial: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond,
	})
	require.NoError(t, err)
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}, Ring: asyncbus.RingOptions{Capacity: 32 << 20}})
	require.NoError(t, err)
	pad := strings.Repeat("x", 1024)
	const n = 8192
	for i := range n {
		slog.New(h).Info("rec", "seq", i, "pad", pad)
	}
	require.Eventually(t, func() bool { return tg.refusals() >= 1 }, time.Minute, time.Millisecond)
	tg.setDown(false)
	require.NoError(t, h.Close())
	got := tg.seqs()
	require.Len(t, got, n)
	for i, v := range got {
		require.EqualValues(t, i, v)
	}
	assert.Zero(t, s.Stats().FailedRecords)
	assert.Greater(t, s.Stats().Requests, uint64(2), "8 MiB in requests under 4 MiB")
}
