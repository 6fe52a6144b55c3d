package logrbridge_test

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/logrbridge"
)

// A logr.Logger writing into an asyncbus handler: V(n) is slog level -n,
// names become the handler's logger name, Error writes the error before its pairs.
func ExampleNewLogger() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{
		Level: slog.Level(-1), // V(1) and below
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if groups == nil && a.Key == slog.TimeKey {
				return slog.Attr{} // a fixed output for this example
			}
			return a
		},
	})
	log := logrbridge.NewLogger(h).WithName("controller").WithValues("namespace", "default")
	log.Info("reconciling", "replicas", 3)
	log.V(1).Info("details", "ready", true)
	log.V(2).Info("not written")
	log.Error(errors.New("conflict"), "update failed", "retry", 1)
	_ = logrbridge.Close(log)
	// Output:
	// {"level":"INFO","msg":"reconciling","logger":"controller","namespace":"default","replicas":3}
	// {"level":"DEBUG+3","msg":"details","logger":"controller","namespace":"default","ready":true}
	// {"level":"ERROR","msg":"update failed","logger":"controller","namespace":"default","error":"conflict","retry":1}
}

// A reconciler's logger for one request: with the request's context
// attached, a level set by ctxattrs.WithLevel applies to its V levels.
func ExampleWithContext() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}, ReplaceAttr: noTime})
	log := logrbridge.NewLogger(h).WithName("controller")

	// In the reconciler: ctx from the controller, marked for debugging.
	ctx := ctxattrs.WithLevel(ctxattrs.With(context.Background(), slog.String("object", "default/web")), slog.LevelDebug)
	rlog := logrbridge.WithContext(log, ctx) // with controller-runtime: WithContext(ctrllog.FromContext(ctx), ctx)
	rlog.V(1).Info("desired state", "replicas", 3)
	log.V(1).Info("not written: no request level")
	_ = logrbridge.Close(log)
	// Output:
	// {"level":"DEBUG+3","msg":"desired state","logger":"controller","object":"default/web","replicas":3}
}

func noTime(groups []string, a slog.Attr) slog.Attr {
	if groups == nil && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// klog's -v and -vmodule for a controller-runtime manager: they set the
// per-logger rules of the asyncbus handler behind ctrl.Log.
func ExampleBindKlogFlags() {
	rules := asyncbus.MustParseLevelRules("info")
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{
		Rules:  rules,
		Format: asyncbus.Logfmt,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if groups == nil && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})
	defer h.Close()
	fs := flag.NewFlagSet("manager", flag.ExitOnError) // flag.CommandLine in main
	logrbridge.BindKlogFlags(fs, rules)
	if err := fs.Parse([]string{"-v=1", "--vmodule=controller=4"}); err != nil { // os.Args[1:]
		panic(err)
	}

	log := logrbridge.NewLogger(h)
	log.V(1).Info("shown: -v=1")
	log.V(2).Info("hidden")
	log.WithName("controller").WithName("pod").V(4).Info("shown: controller=4")
	// Output:
	// level=debug+3 msg="shown: -v=1"
	// level=debug msg="shown: controller=4" logger=controller.pod
}
