package zap_test

import (
	"errors"
	"flag"
	"os"

	"github.com/asyncbus/asyncbus/logrbridge"
	"github.com/asyncbus/asyncbus/logrbridge/zap"
)

// The kubebuilder scaffold's logger setup, unchanged but for the import
// path. (The time layout without time fields keeps this example's output
// fixed; a real program leaves the time encoder alone or sets
// --zap-time-encoding.)
func Example() {
	opts := zap.Options{
		Development: false,
		DestWriter:  os.Stdout,
		TimeEncoder: zap.TimeEncoderOfLayout("T"),
	}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	opts.BindFlags(fs)
	_ = fs.Parse([]string{"--zap-log-level=2", "--zap-stacktrace-level=panic"})
	log := zap.New(zap.UseFlagOptions(&opts))

	setupLog := log.WithName("setup")
	setupLog.Info("starting manager", "version", "v1.2.3")
	log.WithName("controller").WithValues("namespace", "default").V(2).Info("reconciling", "replicas", 3)
	setupLog.Error(errors.New("no kubeconfig"), "unable to start manager")
	_ = logrbridge.Close(log)
	// Output:
	// {"level":"info","ts":"T","logger":"setup","msg":"starting manager","version":"v1.2.3"}
	// {"level":"Level(-2)","ts":"T","logger":"controller","msg":"reconciling","namespace":"default","replicas":3}
	// {"level":"error","ts":"T","logger":"setup","msg":"unable to start manager","error":"no kubeconfig"}
}

// Development mode writes zap's console layout: time, level, logger and
// message separated by tabs, then the fields as a JSON object, and the
// stack trace (from Warn in development) on the following lines.
func Example_development() {
	log := zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stdout),
		zap.ConsoleEncoder(func(c *zap.EncoderConfig) { c.EncodeTime = zap.TimeEncoderOfLayout("T") }))
	log.WithName("setup").V(1).Info("debugging", "pod", "web-0", "ready", true)
	_ = logrbridge.Close(log)
	// Output:
	// T	DEBUG	setup	debugging	{"pod": "web-0", "ready": true}
}
