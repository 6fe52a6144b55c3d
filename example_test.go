package asyncbus_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus"
)

// dropTime removes the time so that the examples' output is stable.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func Example() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{ReplaceAttr: dropTime})
	defer h.Close() // flushes: nothing handled before Close is lost

	log := slog.New(h)
	log.Info("request handled", "method", "GET", "status", 200)
	log.With("user", 42).WithGroup("req").Warn("slow", "ms", 1500)
	// Output:
	// {"level":"INFO","msg":"request handled","method":"GET","status":200}
	// {"level":"WARN","msg":"slow","user":42,"req":{"ms":1500}}
}

// The one-line setup, slog.SetDefault with a new Handler, keeps no
// *Handler to Close: CloseDefault is its one-line shutdown. It closes the
// Handler behind slog.Default() (flushing what was logged) and returns
// Close's error, or an error if the default is not an asyncbus Handler.
func ExampleCloseDefault() {
	slog.SetDefault(slog.New(asyncbus.NewHandler(os.Stdout, &asyncbus.Options{ReplaceAttr: dropTime})))
	defer func() {
		if err := asyncbus.CloseDefault(); err != nil {
			fmt.Fprintln(os.Stderr, "logging:", err)
		}
	}()

	slog.Info("started", "port", 8080)
	// Output:
	// {"level":"INFO","msg":"started","port":8080}
}

func Example_formats() {
	for _, f := range []asyncbus.Format{asyncbus.Text, asyncbus.Logfmt} {
		h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Format: f, ReplaceAttr: dropTime})
		slog.New(h).WithGroup("db").Info("query done", "rows", 3, "table", "users")
		h.Close()
	}
	// Output:
	// level=INFO msg="query done" db.rows=3 db.table=users
	// level=info msg="query done" db.rows=3 db.table=users
}

func ExampleHandler_Named() {
	rules := asyncbus.MustParseLevelRules("info,db=debug")
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Rules: rules, ReplaceAttr: dropTime})
	defer h.Close()

	slog.New(h.Named("db")).Debug("connected", "pool", 4)
	slog.New(h.Named("http")).Debug("hidden: http is at info")
	// Output:
	// {"level":"DEBUG","msg":"connected","logger":"db","pool":4}
}

// LevelRulesFromEnv never returns nil rules: with a malformed variable it
// returns the default rules and an error naming the variable and the rule
// at fault, which the program should show rather than drop.
func ExampleLevelRulesFromEnv() {
	os.Setenv("APP_LOG", "info,db=debugg") // a typo in the deployment
	defer os.Unsetenv("APP_LOG")

	rules, rulesErr := asyncbus.LevelRulesFromEnv("APP_LOG", "info,db=debug")
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Rules: rules, ReplaceAttr: dropTime})
	defer h.Close()
	log := slog.New(h)
	if rulesErr != nil {
		log.Warn("bad $APP_LOG, using the default level rules", "err", rulesErr)
	}
	log.Info("logging", "rules", rules.String())
	// Output:
	// {"level":"WARN","msg":"bad $APP_LOG, using the default level rules","err":"asyncbus: $APP_LOG: level rules \"info,db=debugg\": rule 2 \"db=debugg\": unknown level \"debugg\" (want trace, debug, info, warn, error, fatal, an offset like warn+2, or an integer); using the default \"info,db=debug\""}
	// {"level":"INFO","msg":"logging","rules":"info,db=debug"}
}

func ExampleParseLevel() {
	for _, s := range []string{"warn", "WARN+2", "trace", "fatal", "-4"} {
		l, err := asyncbus.ParseLevel(s)
		fmt.Println(int(l), err)
	}
	// Output:
	// 4 <nil>
	// 6 <nil>
	// -8 <nil>
	// 12 <nil>
	// -4 <nil>
}

func ExampleHandler_Stats() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{ReplaceAttr: dropTime})
	slog.New(h).Info("one")
	h.Close()
	st := h.Stats()
	fmt.Println(st.Enqueued, st.Written, st.Dropped, st.Failed)
	// Output:
	// {"level":"INFO","msg":"one"}
	// 1 1 0 0
}

// Open with a ring file: the ring lives in a memory-mapped file, so records
// whose Handle returned survive kill -9 and are written by the next Open on
// the same ring file, before anything new.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "asyncbus-ring")
	defer os.RemoveAll(dir)

	h, err := asyncbus.Open(os.Stdout, &asyncbus.Options{
		Ring:        asyncbus.RingOptions{File: filepath.Join(dir, "app.ring"), Capacity: 1 << 20},
		ReplaceAttr: dropTime,
	})
	if err != nil {
		fmt.Println(err) // a ring file held by another process: asyncbus.ErrRingLocked
		return
	}
	slog.New(h).Info("durable", "n", 1)
	_ = h.Close()
	fmt.Println("recovered on open:", h.Stats().Recovered)
	// Output:
	// {"level":"INFO","msg":"durable","n":1}
	// recovered on open: 0
}

// flakyOutput fails every write while down is set, then writes to
// os.Stdout: an output with an outage.
type flakyOutput struct{ down atomic.Bool }

func (o *flakyOutput) Write(p []byte) (int, error) {
	if o.down.Load() {
		return 0, errors.New("disk unavailable")
	}
	return os.Stdout.Write(p)
}

// Example_writeAttempts rides out an outage of the output: with the
// default four attempts the batch would be given up and counted in
// Stats.Failed; with a larger budget, Flush reports the outage after four
// attempts (ErrRetrying: the records stay queued) and the records are
// written once the output is back.
func Example_writeAttempts() {
	out := &flakyOutput{}
	out.down.Store(true)
	h := asyncbus.NewHandler(out, &asyncbus.Options{
		ReplaceAttr: dropTime,
		Retry:       asyncbus.RetryOptions{Attempts: 1000, MaxBackoff: time.Millisecond}, // up to ~1 s of retries at WriteRetryMax
		Ring:        asyncbus.RingOptions{Overflow: asyncbus.Drop},                       // no write on the caller: the drainer writes and retries
		OnError:     func(error) {},                                                      // the outage is also reported here
	})
	slog.New(h).Info("during the outage")
	err := h.Flush()
	fmt.Println("still retrying:", errors.Is(err, asyncbus.ErrRetrying))
	out.down.Store(false) // the output is back
	if err := h.Close(); err != nil {
		fmt.Println("close:", err)
	}
	st := h.Stats()
	fmt.Println("written:", st.Written, "failed:", st.Failed)
	// Output:
	// still retrying: true
	// {"level":"INFO","msg":"during the outage"}
	// written: 1 failed: 0
}

// A flight recorder keeps the Debug records an Info handler would not write,
// and writes them before the next Error, so that a failure comes with its
// context and a healthy program's log stays short.
func ExampleFlightRecorder() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{
		Format:   asyncbus.Text,
		Features: asyncbus.FeatureOptions{FlightRecorder: &asyncbus.FlightRecorder{}}, // keeps Debug, triggered by Error
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "first" || a.Key == "span" {
				return slog.Attr{} // times vary from run to run
			}
			return a
		},
	})
	log := slog.New(h)
	log.Debug("cache miss", "key", "user:42")
	log.Info("request", "path", "/users/42")
	log.Debug("query", "rows", 0)
	log.Error("user not found", "id", 42)
	_ = h.Close()
	// Output:
	// level=INFO msg=request path=/users/42
	// level=WARN msg="asyncbus: flight recorder: records kept before the next one" records=2
	// level=DEBUG msg="cache miss" key=user:42
	// level=DEBUG msg=query rows=0
	// level=WARN msg="asyncbus: flight recorder: end" records=2
	// level=ERROR msg="user not found" id=42
}

// Stats counts the records logged at each level, so a dashboard can show
// the error rate without parsing the log.
func ExampleStats_levels() {
	h := asyncbus.NewHandler(io.Discard, nil)
	log := slog.New(h)
	log.Info("started")
	log.Info("request", "path", "/")
	log.Warn("slow request", "path", "/report")
	log.Debug("not logged: below Info")
	log.Error("request failed", "path", "/pay")
	_ = h.Close()
	st := h.Stats()
	fmt.Println("info", st.LoggedInfo, "warn", st.LoggedWarn, "error", st.LoggedError, "debug", st.LoggedDebug)
	// Output: info 2 warn 1 error 1 debug 0
}
