package main

import (
	"testing"
	"time"
)

// Tests of parse_klog.go: klog's text lines as klog and its textlogger
// wrote them in benchmarks/pretty (testdata/peers.txt), and the header's
// corners.

func TestParseKlogPeers(t *testing.T) {
	// klog writes neither year nor zone: the current year, and here UTC.
	at := time.Date(time.Now().Year(), 12, 1, 12, 34, 56, 789_000_000, time.UTC)
	src := func(line string) string { return "peers_test.go:" + line }
	runPeerCases(t, "klog", map[string]*parsed{
		"klog info":     {time: at, level: "INFO", source: src("129"), msg: "Pod status updated", attrs: []string{"pod=kube-system/dns", "ready=true"}},
		"klog V(4)":     {time: at, level: "INFO", source: src("130"), msg: "Syncing", attrs: []string{"count=3"}},
		"klog error":    {time: at, level: "ERROR", source: src("131"), msg: "Failed to watch", attrs: []string{"err=connection refused", "resource=pods"}},
		"klog named":    {time: at, level: "INFO", source: src("132"), msg: `quoted "msg"`, logger: "leader", attrs: []string{"multi=line1 line2"}},
		"klog infof":    {time: at, level: "INFO", source: src("140"), msg: "Starting controller on port 8080"},
		"klog warningf": {time: at, level: "WARN", source: src("141"), msg: "cache is 90% full"},
		"klog errors":   {time: at, level: "ERROR", source: src("142"), msg: "Reconcile failed", attrs: []string{"err=boom", "key=default/web"}},
	})
}

func TestParseKlogHeader(t *testing.T) {
	at := time.Date(time.Now().Year(), 3, 4, 5, 6, 7, 8000, time.UTC)
	runParseCases(t, []parseCase{
		{"fatal", `F0304 05:06:07.000008       1 main.go:9] bye`, &parsed{time: at, level: "FATAL", source: "main.go:9", msg: "bye"}},
		{"empty message", `I0304 05:06:07.000008 1 main.go:9]`, &parsed{time: at, level: "INFO", source: "main.go:9"}},
		{"quoted message, unparsable rest", `I0304 05:06:07.000008 1 main.go:9] "m" not pairs`, &parsed{time: at, level: "INFO", source: "main.go:9", msg: `"m" not pairs`}},
		{"multi-line value start", `I0304 05:06:07.000008 1 main.go:9] "m" obj=<`, &parsed{time: at, level: "INFO", source: "main.go:9", msg: "m", attrs: []string{"obj=<"}}},
		{"bad month", `I1304 05:06:07.000008 1 main.go:9] m`, nil},
		{"no thread", `I0304 05:06:07.000008 main.go:9] m`, nil},
		{"no line number", `I0304 05:06:07.000008 1 main.go] m`, nil},
		{"no bracket", `I0304 05:06:07.000008 1 main.go:9 m`, nil},
		{"other letter", `X0304 05:06:07.000008 1 main.go:9] m`, nil},
	})
}
