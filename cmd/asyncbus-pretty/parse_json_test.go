package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
)

// Tests of parse_json.go: logr funcr's JSON as funcr writes it, the JSON
// lines of zap, zerolog, logrus and phuslu/log as they wrote them in
// benchmarks/pretty (testdata/peers.txt), the other conventions' keys, and
// the JSON grammar's corners. (slog's and asyncbus's JSON: print_test.go
// and TestParseOwnFormats.)

func TestParseJSONFuncr(t *testing.T) {
	var buf bytes.Buffer
	log := funcr.NewJSON(func(obj string) { buf.WriteString(obj + "\n") }, funcr.Options{Verbosity: 2, LogCaller: funcr.All})
	log.WithName("ctrl").Info("reconciled", "pod", "web-1", "n", 3)
	log.V(2).Info("detail", "nested", map[string]any{"a": 1})
	log.Error(errors.New("timeout"), "sync failed", "attempt", 2)
	got := lines(buf.String())
	require.Len(t, got, 3)
	// funcr's caller is {"file":..,"line":..}: the source column.
	runParseCases(t, []parseCase{
		{"info", got[0], &parsed{level: "INFO", msg: "reconciled", logger: "ctrl", source: "parse_json_test.go:" + funcrLine(got[0]), attrs: []string{"pod=web-1", "n=3"}}},
		{"V(2)", got[1], &parsed{level: "DEBUG+2", msg: "detail", source: "parse_json_test.go:" + funcrLine(got[1]), attrs: []string{"nested.a=1"}}},
		{"error", got[2], &parsed{level: "ERROR", msg: "sync failed", source: "parse_json_test.go:" + funcrLine(got[2]), attrs: []string{"error=timeout", "attempt=2"}}},
	})
}

// funcrLine digs the caller's line out of funcr's output.
func funcrLine(line string) string {
	_, after, _ := strings.Cut(line, `"line":`)
	n := 0
	for n < len(after) && after[n] >= '0' && after[n] <= '9' {
		n++
	}
	return after[:n]
}

func TestParseJSONGrammar(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
	runParseCases(t, []parseCase{
		{"escapes", `{"msg":"q\"b\\s\/n\nt\tu\u00e9\ud83d\ude00"}`, &parsed{msg: "q\"b\\s/n\nt\tu\u00e9\U0001F600"}},
		{"lone surrogate", `{"msg":"\ud800x"}`, &parsed{msg: "\uFFFDx"}},
		{"literals and numbers", `{"msg":"m","a":true,"b":null,"c":-1.5e+3,"d":0}`, &parsed{msg: "m", attrs: []string{"a=true", "b=null", "c=-1.5e+3", "d=0"}}},
		{"arrays as JSON text", `{"msg":"m","a":[1,"x",{"y":[]}],"e":[]}`, &parsed{msg: "m", attrs: []string{`a=[1,"x",{"y":[]}]`, "e=[]"}}},
		{"empty object as JSON text", `{"msg":"m","o":{}}`, &parsed{msg: "m", attrs: []string{"o={}"}}},
		{"spaces", ` { "msg" : "m" , "o" : { "k" : 1 } } `, &parsed{msg: "m", attrs: []string{"o.k=1"}}},
		{"deep nesting kept as text", `{"msg":"m","d":` + deep + `}`, &parsed{msg: "m", attrs: []string{
			"d." + strings.Repeat("a.", maxJSONDepth-1) + "a=" + strings.Repeat(`{"a":`, 40-maxJSONDepth) + "1" + strings.Repeat("}", 40-maxJSONDepth)}}},
		{"duplicate msg kept", `{"msg":"a","msg":"b"}`, &parsed{msg: "a", attrs: []string{"msg=b"}}},
		{"msg not a string", `{"msg":42}`, &parsed{msg: "42"}},
		{"source object", `{"msg":"m","source":{"function":"f","file":"/a/b/c.go","line":7}}`, &parsed{msg: "m", source: "/a/b/c.go:7"}},
		{"source not a source", `{"msg":"m","source":{"file":"x"}}`, &parsed{msg: "m", attrs: []string{"source.file=x"}}},
		{"unknown level kept", `{"level":"verbose","msg":"m"}`, &parsed{msg: "m", attrs: []string{"level=verbose"}}},
		{"dpanic", `{"level":"dpanic","msg":"m"}`, &parsed{level: "ERROR", msg: "m", attrs: []string{"level=dpanic"}}},
		{"klog JSON verbosity", `{"ts":1796128496789.0,"caller":"x/y.go:3","msg":"m","v":2}`, &parsed{time: utcTime("2026-12-01T12:34:56.789Z"), level: "DEBUG+2", msg: "m", source: "x/y.go:3"}},
		{"time not a time", `{"time":"soon","msg":"m"}`, &parsed{msg: "m", attrs: []string{"time=soon"}}},
		{"trailing comma", `{"msg":"m",}`, nil},
		{"missing colon", `{"msg" "m"}`, nil},
		{"bad escape", `{"msg":"\q"}`, nil},
		{"bad number", `{"msg":"m","n":01}`, nil},
		{"bad literal", `{"msg":"m","n":nul}`, nil},
		{"unclosed array", `{"msg":"m","a":[1,2}`, nil},
		{"mismatched brackets", `{"msg":"m","a":[{"b":1]}`, nil},
		{"two objects", `{"msg":"m"}{"msg":"n"}`, nil},
		{"not an object", `["msg"]`, nil},
	})
}

// peerTime is the time of benchmarks/pretty's lines.
var peerTime = utcTime("2026-12-01T12:34:56.789Z")

func TestParseJSONZap(t *testing.T) {
	stack := "example.com/app.run\n\t/src/app/main.go:42\nmain.main\n\t/src/app/main.go:12"
	src := func(line string) string { return "pretty/peers_test.go:" + line }
	runPeerCases(t, "zap", map[string]*parsed{
		"zap info":    {time: peerTime, level: "INFO", logger: "api", source: src("70"), msg: "request served", attrs: []string{"path=/v1/items", "status=200", "took=1.5"}},
		"zap debug":   {time: peerTime, level: "DEBUG", logger: "api", source: src("71"), msg: "cache lookup", attrs: []string{`keys=["a","b"]`, "req.id=r-1"}},
		"zap warn":    {time: peerTime, level: "WARN", logger: "api", source: src("72"), msg: "slow", attrs: []string{"retry=true"}},
		"zap error":   {time: peerTime, level: "ERROR", logger: "api", source: src("73"), msg: "write failed", attrs: []string{"error=disk full", "stacktrace=" + stack}},
		"zap dpanic":  {time: peerTime, level: "ERROR", logger: "api", source: src("74"), msg: "invariant broken", attrs: []string{"level=dpanic", "stacktrace=" + stack}},
		"zap iso8601": {time: peerTime, level: "INFO", source: src("77"), msg: "iso time"},
		"zap millis":  {time: peerTime, level: "INFO", source: src("80"), msg: "millis time"},
		"zapr info":   {time: peerTime, level: "INFO", logger: "ctrl", source: src("82"), msg: "reconciled", attrs: []string{"pod=web-1"}},
		"zapr V(1)":   {time: peerTime, level: "DEBUG", source: src("83"), msg: "verbose"},
		"zapr error":  {time: peerTime, level: "ERROR", source: src("84"), msg: "sync failed", attrs: []string{"error=timeout", "stacktrace=" + stack}},
	})
}

func TestParseJSONZerolog(t *testing.T) {
	src := func(line string) string { return "peers_test.go:" + line }
	runPeerCases(t, "zerolog", map[string]*parsed{
		"zerolog info":     {time: peerTime, level: "INFO", source: src("106"), msg: "request served", attrs: []string{"service=api", "path=/v1/items", "status=200"}},
		"zerolog error":    {time: peerTime, level: "ERROR", source: src("107"), msg: "write failed", attrs: []string{"service=api", "error=disk full"}},
		"zerolog debug":    {time: peerTime, level: "DEBUG", source: src("108"), msg: "cache lookup", attrs: []string{"service=api", "req.id=r-1", `keys=["a","b"]`}},
		"zerolog trace":    {time: peerTime, level: "TRACE", source: src("109"), msg: "tracing", attrs: []string{"service=api"}},
		"zerolog fatal":    {time: peerTime, level: "FATAL", source: src("110"), msg: "giving up", attrs: []string{"service=api"}},
		"zerolog panic":    {time: peerTime, level: "FATAL", source: src("111"), msg: "panicking", attrs: []string{"level=panic", "service=api"}},
		"zerolog no level": {time: peerTime, source: src("112"), msg: "no level", attrs: []string{"service=api"}},
		"zerolog unix":     {time: peerTime.Truncate(time.Second), level: "WARN", msg: "unix time"},
		"zerolog unix ms":  {time: peerTime, level: "WARN", msg: "unix ms time"},
	})
}

// TestParseJSONConventions: the keys and levels of pino, bunyan, Elastic
// (ECS, as ecszap nests log.origin), Datadog, Google Cloud and zap's
// development config, in lines as their documentation shows them.
func TestParseJSONConventions(t *testing.T) {
	at := utcTime("2026-12-01T12:34:56.789Z")
	runParseCases(t, []parseCase{
		{"pino", `{"level":30,"time":1796128496789,"pid":657,"hostname":"box","msg":"hello world"}`,
			&parsed{time: at, level: "INFO", msg: "hello world", attrs: []string{"pid=657", "hostname=box"}}},
		{"pino trace", `{"level":10,"msg":"m"}`, &parsed{level: "TRACE", msg: "m"}},
		{"pino fatal", `{"level":60,"msg":"m"}`, &parsed{level: "FATAL", msg: "m"}},
		{"bunyan", `{"name":"myapp","hostname":"box","pid":40161,"level":40,"msg":"hi","time":"2026-12-01T12:34:56.789Z","v":0}`,
			&parsed{time: at, level: "WARN", msg: "hi", attrs: []string{"name=myapp", "hostname=box", "pid=40161", "v=0"}}},
		{"quoted number is no pino level", `{"level":"30","msg":"m"}`, &parsed{msg: "m", attrs: []string{"level=30"}}},
		{"ecszap", `{"log.level":"error","@timestamp":"2026-12-01T12:34:56.789Z","log.logger":"db","log.origin":{"file.name":"main/main.go","file.line":265},"message":"m","ecs.version":"1.6.0"}`,
			&parsed{time: at, level: "ERROR", msg: "m", logger: "db", source: "main/main.go:265"}},
		{"Datadog status", `{"timestamp":"2026-12-01T12:34:56.789Z","status":"warn","message":"m","logger.name":"db","caller":"main/main.go:7"}`,
			&parsed{time: at, level: "WARN", msg: "m", logger: "db", source: "main/main.go:7"}},
		{"status after a level is an attribute", `{"status":"error","level":"info","msg":"m"}`,
			&parsed{level: "INFO", msg: "m", attrs: []string{"status=error"}}},
		{"HTTP status is an attribute", `{"msg":"m","status":200,"code":"404"}`, &parsed{msg: "m", attrs: []string{"status=200", "code=404"}}},
		{"status that is no level", `{"msg":"m","status":"ok"}`, &parsed{msg: "m", attrs: []string{"status=ok"}}},
		{"GCP", `{"time":"2026-12-01T12:34:56.789Z","severity":"NOTICE","message":"m","logging.googleapis.com/sourceLocation":{"file":"main.go","line":"9","function":"main.main"}}`,
			&parsed{time: at, level: "INFO+2", msg: "m", source: "main.go:9", attrs: []string{"severity=NOTICE"}}},
		{"zap development JSON", `{"L":"WARN","T":"2026-12-01T12:34:56.789Z","N":"api","C":"app/main.go:3","M":"m","k":1}`,
			&parsed{time: at, level: "WARN", msg: "m", logger: "api", source: "app/main.go:3", attrs: []string{"k=1"}}},
		{"one-letter keys elsewhere are attributes", `{"msg":"m","L":"WARN","M":"x"}`, &parsed{msg: "m", attrs: []string{"L=WARN", "M=x"}}},
	})
}

func TestParseJSONZapDevelopment(t *testing.T) {
	src := func(line string) string { return "pretty/peers_more_test.go:" + line }
	runPeerCases(t, "dev-zap json", map[string]*parsed{
		"dev-zap json info":  {time: peerTime, level: "INFO", logger: "api", source: src("35"), msg: "request served", attrs: []string{"path=/v1/items", "status=200"}},
		"dev-zap json debug": {time: peerTime, level: "DEBUG", logger: "api", source: src("36"), msg: "cache lookup", attrs: []string{"req.id=r-1"}},
		"dev-zap json error": {time: peerTime, level: "ERROR", logger: "api", source: src("37"), msg: "write failed", attrs: []string{"error=disk full"}},
	})
}

func TestParseJSONLogrus(t *testing.T) {
	src := func(line string) string { return "peers_more_test.go:" + line }
	at := peerTime.Truncate(time.Second) // logrus's default time has no fraction
	fn := "func=github.com/asyncbus/asyncbus/benchmarks/pretty.logrusLines"
	runPeerCases(t, "logrus json", map[string]*parsed{
		"logrus json info":  {time: at, level: "INFO", source: src("72"), msg: "request served", attrs: []string{fn, "service=api", "status=200"}},
		"logrus json error": {time: at, level: "ERROR", source: src("73"), msg: "write failed", attrs: []string{"error=disk full", fn, "service=api"}},
		"logrus json trace": {time: at, level: "TRACE", source: src("74"), msg: "tracing", attrs: []string{fn, "service=api"}},
		"logrus json warn":  {time: at, level: "WARN", source: src("75"), msg: "slow", attrs: []string{fn, "service=api"}},
		"logrus json fatal": {time: at, level: "FATAL", source: src("76"), msg: "giving up", attrs: []string{fn, "service=api"}},
		"logrus json panic": {time: at, level: "FATAL", source: src("77"), msg: "panicking", attrs: []string{fn, "level=panic", "service=api"}},
	})
}

func TestParseJSONPhuslu(t *testing.T) {
	src := func(line string) string { return "pretty/peers_more_test.go:" + line }
	common := []string{"service=api", "callerfunc=pretty.phusluLines", "goid=1"}
	with := func(attrs ...string) []string { return append(append([]string{}, common...), attrs...) }
	runPeerCases(t, "phuslu", map[string]*parsed{
		"phuslu info":     {time: peerTime, level: "INFO", source: src("103"), msg: "request served", attrs: with("path=/v1/items", "status=200")},
		"phuslu error":    {time: peerTime, level: "ERROR", source: src("104"), msg: "write failed", attrs: with("error=disk full")},
		"phuslu debug":    {time: peerTime, level: "DEBUG", source: src("105"), msg: "cache lookup", attrs: with("req.id=r-1")},
		"phuslu trace":    {time: peerTime, level: "TRACE", source: src("106"), msg: "tracing", attrs: with()},
		"phuslu warn":     {time: peerTime, level: "WARN", source: src("107"), msg: "slow", attrs: with()},
		"phuslu panic":    {time: peerTime, level: "FATAL", source: src("110"), msg: "panicking", attrs: []string{"level=panic", "service=api", "callerfunc=pretty.phusluLines.func1", "goid=1"}},
		"phuslu no level": {time: peerTime, source: src("112"), msg: "no level", attrs: with()},
	})
}
