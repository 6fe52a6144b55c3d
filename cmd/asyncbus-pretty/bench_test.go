package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

// Benchmarks of the printer against a `jq -c .` stand-in written with
// encoding/json (each line decoded into a map[string]any and encoded
// again), on the same lines, in the same run. Each reports lines/s.
//
//	go test -run XXX -bench . -count 5 ./cmd/asyncbus-pretty

// benchJSONLines are slog JSON lines of a typical service (real output
// of slog.NewJSONHandler) and the zap and zerolog lines of
// testdata/peers.txt.
func benchJSONLines(b *testing.B) [][]byte {
	var buf bytes.Buffer
	h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{AddSource: true})
	log := slog.New(h).With("service", "checkout", "version", "1.42.0")
	for i := range 64 {
		log.Info("request served", "method", "GET", "path", "/v1/items/"+strings.Repeat("x", i%7),
			"status", 200, "bytes", 5120+i, "took", 1500*time.Microsecond, slog.Group("user", "id", i, "tier", "gold"))
		if i%8 == 0 {
			log.Warn("slow upstream", "upstream", "inventory", "latency_ms", 250.5, "retry", true)
		}
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	peers, err := os.ReadFile("testdata/peers.txt")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(peers), "\n") {
		if _, text, ok := strings.Cut(l, "\t"); ok && strings.HasPrefix(text, "{") {
			lines = append(lines, []byte(text))
		}
	}
	return lines
}

func BenchmarkPretty(b *testing.B) {
	lines := benchJSONLines(b)
	p := newPrinter(false, false, filter{})
	var out []byte
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		out = p.appendLine(out[:0], lines[n%len(lines)])
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkJQBaseline is `jq -c .` done with encoding/json.
func BenchmarkJQBaseline(b *testing.B) {
	lines := benchJSONLines(b)
	var out []byte
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(lines[n%len(lines)], &m); err != nil {
			b.Fatal(err)
		}
		enc, err := json.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		out = append(append(out[:0], enc...), '\n')
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "lines/s")
}
