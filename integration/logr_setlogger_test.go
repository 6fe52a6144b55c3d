package integration

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/asyncbus/asyncbus/logrbridge"
)

// Like real programs, these are made at package initialisation, before
// ctrl.SetLogger: controller-runtime hands out promises that SetLogger
// fulfils.
var (
	setupLogBefore = ctrl.Log.WithName("setup")
	childBefore    = ctrl.Log.WithName("before").WithValues("phase", "init")
)

// globalLogOut receives everything logged through ctrl.Log; SetLogger can
// only take effect once per process, so it is installed once.
var (
	globalLogOut  logrBuffer
	globalLogOnce sync.Once
	globalLogger  logr.Logger
)

func installGlobalLogger() {
	globalLogOnce.Do(func() {
		globalLogger = logrbridge.NewLogger(logrJSONHandler(&globalLogOut, slog.Level(-1)))
		ctrl.SetLogger(globalLogger)
	})
}

// captureStderr redirects os.Stderr while fn runs and returns what was written.
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	orig := os.Stderr
	os.Stderr = w
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	defer func() {
		os.Stderr = orig
	}()
	fn()
	os.Stderr = orig
	require.NoError(t, w.Close())
	return <-got
}

func TestSetLoggerTiming(t *testing.T) {
	lines := map[string]int{}
	stderr := captureStderr(t, func() {
		installGlobalLogger()
		globalLogOut.Reset()
		childAfter := ctrl.Log.WithName("after").WithValues("phase", "run")
		ctx := logf.IntoContext(context.Background(), childAfter.WithValues("req", 7))

		_, l := here()
		ctrl.Log.Info("root")
		setupLogBefore.Info("setup before")
		childBefore.Info("child before", "k", 1)
		childBefore.V(1).Info("child before V1")
		childAfter.Info("child after")
		childAfter.Error(nil, "child after error")
		logf.FromContext(ctx).Info("from context")
		childBefore.WithName("grandchild").Info("grandchild")
		childBefore.V(2).Info("hidden: V(2) is off")
		for i, msg := range []string{"root", "setup before", "child before", "child before V1", "child after", "child after error", "from context", "grandchild"} {
			lines[msg] = l + 1 + i
		}
	})
	assert.NotContains(t, stderr, "SetLogger(...) was never called")
	assert.Empty(t, stderr)

	ls := logrLines(t, globalLogOut.String())
	require.Len(t, ls, len(lines), globalLogOut.String())
	want := map[string]map[string]any{
		"root":              {},
		"setup before":      {"logger": "setup"},
		"child before":      {"logger": "before", "phase": "init", "k": float64(1)},
		"child before V1":   {"logger": "before", "phase": "init", "level": "DEBUG+3"},
		"child after":       {"logger": "after", "phase": "run"},
		"child after error": {"logger": "after", "phase": "run", "level": "ERROR"},
		"from context":      {"logger": "after", "phase": "run", "req": float64(7)},
		"grandchild":        {"logger": "before.grandchild", "phase": "init"},
	}
	for _, m := range ls {
		msg := m["msg"].(string)
		require.Contains(t, want, msg)
		for k, v := range want[msg] {
			assert.Equal(t, v, m[k], "%s: %s", msg, k)
		}
		assert.True(t, strings.HasSuffix(m["caller"].(string), "integration/logr_setlogger_test.go:"+itoa(lines[msg])), "%s: %v", msg, m["caller"])
	}
}
