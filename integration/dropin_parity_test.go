package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/asyncbus/asyncbus/logrbridge"
	ourzap "github.com/asyncbus/asyncbus/logrbridge/zap"
)

type parityPanicStringer struct{}

func (parityPanicStringer) String() string { panic("boom") }

// parityValueStringer has a value receiver: a nil pointer to it panics.
type parityValueStringer struct{ n int }

func (v parityValueStringer) String() string { return fmt.Sprint("n=", v.n) }

type parityPanicMarshaler struct{}

func (parityPanicMarshaler) MarshalLog() any { panic("mboom") }

type parityPtrErr struct{ msg string }

func (e *parityPtrErr) Error() string { return e.msg }

// bothOutputs logs through controller-runtime's zap and the drop-in, built
// from the same options, and returns their first lines (the console's
// stack traces follow on the next lines) with timestamps normalised.
func bothOutputs(t *testing.T, cr []crzap.Opts, ours []ourzap.Opts, fn func(l logr.Logger)) (want, got string) {
	t.Helper()
	var a, b bytes.Buffer
	crl := crzap.New(append(cr, crzap.WriteTo(&a))...)
	ourl := ourzap.New(append(ours, ourzap.WriteTo(&b))...)
	for _, l := range []logr.Logger{crl, ourl} {
		fn(l) // one call site: the stack traces of Error lines match
	}
	require.NoError(t, logrbridge.Close(ourl))
	first := func(s string) string { return strings.SplitN(normalize(s), "\n", 2)[0] }
	return first(a.String()), first(b.String())
}

func TestDropInValuesMatchControllerRuntime(t *testing.T) {
	var nilTime *metav1.Time
	var nilPod *corev1.Pod
	var nilErr *parityPtrErr
	cases := []struct {
		name string
		fn   func(l logr.Logger)
	}{
		{"nil *metav1.Time (DeletionTimestamp)", func(l logr.Logger) { l.Info("m", "deletionTimestamp", nilTime) }},
		{"nil pointer to value-receiver Stringer", func(l logr.Logger) { l.Info("m", "s", (*parityValueStringer)(nil)) }},
		{"panicking Stringer", func(l logr.Logger) { l.Info("m", "s", parityPanicStringer{}) }},
		{"panicking MarshalLog", func(l logr.Logger) { l.Info("m", "s", parityPanicMarshaler{}) }},
		{"nil pointer error value", func(l logr.Logger) { l.Info("m", "e", nilErr) }},
		{"typed nil error to Error", func(l logr.Logger) { l.Error(nilErr, "m") }},
		{"nil *corev1.Pod", func(l logr.Logger) { l.Info("m", "pod", nilPod) }},
		{"several, then a plain value", func(l logr.Logger) {
			l.Info("m", "t", nilTime, "s", parityPanicStringer{}, "pod", nilPod, "after", 1)
		}},
		// The case: the console encoder writes a MarshalLog
		// result as zap.Reflect does, compact JSON.
		{"NamespacedName in WithValues", func(l logr.Logger) {
			l.WithValues("req", types.NamespacedName{Name: "mc", Namespace: "default"}).Info("m", "ref", klog.KRef("", "web-0"))
		}},
		{"maps, slices, pointers", func(l logr.Logger) {
			n, s := 3, "x\by"
			l.WithValues("labels", map[string]string{"b": "2", "a": "1"}, "ports", []int32{80, 443}).
				Info("m", "n", &n, "s", &s, "none", (*int)(nil), "f32", float32(0.1), "durations", []time.Duration{time.Second})
		}},
		{"Kubernetes object", func(l logr.Logger) {
			l.Info("m", "pod", &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}, "meta", metav1.ObjectMeta{Name: "om"})
		}},
	}
	for _, dev := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("dev=%v/%s", dev, tc.name), func(t *testing.T) {
				want, got := bothOutputs(t, []crzap.Opts{crzap.UseDevMode(dev)}, []ourzap.Opts{ourzap.UseDevMode(dev)}, tc.fn)
				assert.Equal(t, want, got)
			})
		}
	}
}

// TestDropInShortensObjectsInWithValues pins a documented difference:
// controller-runtime's production encoder converts the Kubernetes objects
// of the log call only, so one given to WithValues is written in full
// (its String()); the drop-in shortens both.
func TestDropInShortensObjectsInWithValues(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}
	want, got := bothOutputs(t, nil, nil, func(l logr.Logger) { l.WithValues("pod", pod).Info("m") })
	assert.Equal(t, `{"level":"info","ts":TS,"msg":"m","pod":"`+pod.String()+`"}`, want)
	assert.Equal(t, `{"level":"info","ts":TS,"msg":"m","pod":{"namespace":"default","name":"web-0"}}`, got)
	want, got = bothOutputs(t, nil, nil, func(l logr.Logger) { l.Info("m", "pod", pod) })
	assert.Equal(t, want, got, "in the log call both shorten")
}

// TestDropInVLevelsMatchControllerRuntime: zapr caps V at 127 (zap levels
// are int8), so at the lowest level, -127 (--zap-log-level=127), every V
// from 127 up is enabled and named Level(-127).
func TestDropInVLevelsMatchControllerRuntime(t *testing.T) {
	for _, dev := range []bool{false, true} {
		for _, level := range []int8{-126, -127} {
			for _, v := range []int{2, 126, 127, 128, 200, 1000} {
				t.Run(fmt.Sprintf("dev=%v/level=%d/V(%d)", dev, level, v), func(t *testing.T) {
					var enabled []bool // controller-runtime's, then the drop-in's
					want, got := bothOutputs(t,
						[]crzap.Opts{crzap.UseDevMode(dev), crzap.Level(zapcore.Level(level))},
						[]ourzap.Opts{ourzap.UseDevMode(dev), ourzap.Level(zapcore.Level(level))}, // the scaffold's zapcore form
						func(l logr.Logger) {
							enabled = append(enabled, l.V(v).Enabled())
							l.V(v).Info("m")
						})
					require.Len(t, enabled, 2)
					assert.Equal(t, enabled[0], enabled[1], "Enabled")
					assert.Equal(t, want, got)
				})
			}
		}
	}
}

// TestDropInNewLeavesNothingBehind: a dropped controller-runtime logger is
// garbage; a dropped drop-in logger is closed once unreachable, its
// drainer goroutine gone and its ring freed.
func TestDropInNewLeavesNothingBehind(t *testing.T) {
	const loggers = 50
	measure := func(newLogger func() logr.Logger) (goroutines int, heapMiB float64) {
		runtime.GC()
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		g0 := runtime.NumGoroutine()
		for range loggers {
			newLogger().WithName("test").Info("hello")
		}
		// The handlers are closed on goroutines started by cleanups after
		// a collection: wait for the goroutine count, polling across
		// collections, for at most 10 s.
		for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > g0 && time.Now().Before(deadline); {
			runtime.GC()
			runtime.Gosched()
		}
		runtime.GC()
		runtime.ReadMemStats(&ms1)
		return runtime.NumGoroutine() - g0, float64(int64(ms1.HeapAlloc)-int64(ms0.HeapAlloc)) / (1 << 20)
	}
	crG, crHeap := measure(func() logr.Logger { return crzap.New(crzap.WriteTo(io.Discard)) })
	ourG, ourHeap := measure(func() logr.Logger { return ourzap.New(ourzap.WriteTo(io.Discard)) })
	t.Logf("%d x New + one line, dropped: controller-runtime %+d goroutines, %+.1f MiB heap; drop-in %+d goroutines, %+.1f MiB heap", loggers, crG, crHeap, ourG, ourHeap)
	assert.LessOrEqual(t, ourG, max(crG, 0), "goroutines left behind by dropped loggers")
	// Absolute, not relative to controller-runtime's figure: rings of
	// loggers closed by earlier tests are freed during either measurement
	// (a closed handler stays reachable from its cleanup until that has
	// run), which can only lower the figures. 50 kept rings are 400 MiB.
	assert.Less(t, ourHeap, 16.0, "heap kept by dropped loggers (MiB; one ring is 8)")
}

// TestDropInMisuseMatchesZapr: an odd number of arguments, a non-string
// key or a zap.Field in a key's place gives zapr's DPanic line, then the
// record with the pairs before the bad argument, in Info, Error and
// WithValues, in both modes. controller-runtime's development mode panics
// after the DPanic line; the drop-in goes on (its package doc says why),
// and what it writes next is what zapr logs after a DPanic that returns.
func TestDropInMisuseMatchesZapr(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kv    []any
		panic string
	}{
		{"odd", []any{"a", 1, "dangling"}, "odd number of arguments passed as key-value pairs for logging"},
		{"non-string key", []any{"a", 1, 42, "v", "b", 2}, "non-string key argument passed to logging, ignoring all later arguments"},
		{"nil key", []any{nil, "v"}, "non-string key argument passed to logging, ignoring all later arguments"},
		{"object as the ignored key", []any{"a", 1, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}}, "odd number of arguments passed as key-value pairs for logging"},
		{"zap.Field", []any{"a", 1, zap.String("k", "v"), "b", 2}, "strongly-typed Zap Field passed to logr"},
	} {
		for _, dev := range []bool{false, true} {
			for _, kind := range []int{opInfo, opError, opValues} {
				ops := []dropinOp{{kind: opName, name: "ctrl"}, {kind: kind, msg: "m", err: errors.New("e"), kv: tc.kv}}
				if kind == opValues {
					ops = append(ops, dropinOp{kind: opInfo, msg: "after"})
				}
				t.Run(fmt.Sprintf("%s/dev=%v/%s", tc.name, dev, ops[1]), func(t *testing.T) {
					var want, got bytes.Buffer
					crl := crzap.New(crzap.UseDevMode(dev), crzap.WriteTo(&want))
					ourl := ourzap.New(ourzap.UseDevMode(dev), ourzap.WriteTo(&got))
					var panics [2][]string
					for i, l := range []logr.Logger{crl, ourl} {
						panics[i] = runDropinOps(l, ops) // one call site: the stack traces match
					}
					require.NoError(t, logrbridge.Close(ourl))
					if dev {
						assert.Equal(t, []string{tc.panic}, panics[0], "controller-runtime panics")
					} else {
						assert.Empty(t, panics[0])
					}
					assert.Empty(t, panics[1], "the drop-in does not panic")
					level := map[bool]string{false: `{"level":"dpanic",`, true: "\tDPANIC\tctrl\t" + tc.panic}[dev]
					assert.Contains(t, got.String(), level)
					assert.Equal(t, normalize(want.String()), normalize(got.String()))
				})
			}
		}
	}
}
