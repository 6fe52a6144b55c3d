package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/logrbridge"
	ourzap "github.com/asyncbus/asyncbus/logrbridge/zap"
)

// The kinds of logr call a randomized program makes.
const (
	opName = iota
	opValues
	opInfo
	opError
)

// dropinOp is one logr call: WithName, WithValues, V(v).Info or Error.
type dropinOp struct {
	kind int
	name string // opName
	v    int    // opInfo
	msg  string
	err  error // opError
	kv   []any
}

func (op dropinOp) String() string {
	kind := []string{"WithName", "WithValues", "Info", "Error"}[op.kind]
	return fmt.Sprintf("%s(name=%q v=%d msg=%q err=%#v kv=%#v)", kind, op.name, op.v, op.msg, op.err, op.kv)
}

func applyDropinOp(l logr.Logger, op dropinOp) logr.Logger {
	switch op.kind {
	case opName:
		return l.WithName(op.name)
	case opValues:
		return l.WithValues(op.kv...)
	case opInfo:
		l.V(op.v).Info(op.msg, op.kv...)
	default:
		l.Error(op.err, op.msg, op.kv...)
	}
	return l
}

// tryDropinOp runs op and returns what it panicked with: zap's
// development mode panics after writing a DPanic line.
func tryDropinOp(l logr.Logger, op dropinOp) (next logr.Logger, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			next, panicked = l, p
		}
	}()
	return applyDropinOp(l, op), nil
}

// runDropinOps runs ops on l. An op that panics (controller-runtime in
// development mode, after writing zapr's DPanic line) is run again with
// the arguments zapr keeps, which is what zapr logs when DPanic returns:
// the reference for the drop-in, which writes the DPanic line and goes on.
// Every op runs from the same line, so that stack traces agree.
func runDropinOps(l logr.Logger, ops []dropinOp) (panics []string) {
	for _, op := range ops {
		for {
			next, p := tryDropinOp(l, op)
			if p == nil {
				l = next
				break
			}
			panics = append(panics, fmt.Sprint(p))
			op.kv = zaprKept(op.kv)
		}
	}
	return panics
}

// zaprKept is the part of kv that zapr logs: the pairs before a final key
// without a value or a key that is not a string.
func zaprKept(kv []any) []any {
	for i := 0; i < len(kv); i += 2 {
		if _, ok := kv[i].(string); !ok || i+1 == len(kv) {
			return kv[:i]
		}
	}
	return kv
}

// Values of the kinds a reconciler logs.
type (
	dropinSpec struct {
		Replicas int               `json:"replicas"`
		Labels   map[string]string `json:"labels,omitempty"`
		Ports    []int32           `json:"ports"`
		Paused   *bool             `json:"paused,omitempty"`
		Inner    *dropinSpec       `json:"inner,omitempty"`
		When     time.Time         `json:"when"`
		Took     time.Duration     `json:"took"`
	}
	dropinPhase     string
	dropinVerboseEr struct{ msg string }
	dropinValuer    struct{ n int }
	dropinMarshaler struct{ s string }
)

func (p dropinPhase) String() string    { return "phase:" + string(p) }
func (e dropinVerboseEr) Error() string { return e.msg }
func (v dropinValuer) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("n", v.n), slog.String("s", "x"))
}
func (m dropinMarshaler) MarshalLog() any { return map[string]string{"marshaled": m.s} }
func (e dropinVerboseEr) Format(s fmt.State, verb rune) {
	if verb == 'v' && s.Flag('+') {
		fmt.Fprint(s, e.msg+"\nwith detail")
		return
	}
	fmt.Fprint(s, e.msg)
}

// dropinGen draws random programs.
type dropinGen struct {
	r *rand.Rand
	// objects: Kubernetes objects may be WithValues values (development
	// mode only: in production controller-runtime writes them in full
	// there, a documented difference pinned by
	// TestDropInShortensObjectsInWithValues).
	objects bool
}

func (g dropinGen) pick(n int) int { return g.r.IntN(n) }

func (g dropinGen) str() string {
	pieces := []string{"a", "web-0", " ", "\"", "\\", "\n", "\t", "\x00", "\x7f", "\xff", "\u2028", "<&>", "é", "日本", "\b", "\f"}
	var b strings.Builder
	for range g.pick(4) {
		b.WriteString(pieces[g.pick(len(pieces))])
	}
	return b.String()
}

func (g dropinGen) pod() *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-" + fmt.Sprint(g.pick(3)), Namespace: []string{"", "default"}[g.pick(2)]}}
	if g.pick(2) == 0 {
		p.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
	}
	return p
}

// object is a Kubernetes object, a nil one included.
func (g dropinGen) object() any {
	switch g.pick(5) {
	case 0:
		return g.pod()
	case 1:
		return (*corev1.Pod)(nil)
	case 2:
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "kube-system"}, Data: map[string]string{"k": g.str()}}
	case 3:
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("example.com/v1")
		u.SetKind("Widget")
		u.SetName("w")
		u.SetNamespace("default")
		return u
	default:
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	}
}

var (
	dropinZones = []*time.Location{time.UTC, time.FixedZone("X", 5*3600+30*60), time.FixedZone("Y", -7*3600)}
	dropinTime  = time.Date(2024, 5, 17, 10, 30, 45, 123456789, time.UTC)
)

// value draws a value; depth bounds nesting.
func (g dropinGen) value(depth int) any {
	i8, s, d, tm, f := int8(-3), g.str(), 1500*time.Millisecond, dropinTime.In(dropinZones[g.pick(3)]), 0.25
	yes := true
	switch g.pick(34) {
	case 0:
		return g.str()
	case 1:
		return []any{0, -7, int64(math.MaxInt64), uint64(math.MaxUint64), int8(-8), uint16(9), int32(-32)}[g.pick(7)]
	case 2:
		return []float64{0, 1.5, -2.25, 1e21, 1e-7, math.NaN(), math.Inf(1), math.Inf(-1), 123456789.125}[g.pick(9)]
	case 3:
		return []float32{0.1, -2.5, 1e20, float32(math.Inf(-1))}[g.pick(4)]
	case 4:
		return []any{true, nil, complex(1, -2), complex64(complex(0.1, 3))}[g.pick(4)]
	case 5:
		return time.Duration(g.r.Int64N(int64(10 * time.Hour)))
	case 6:
		return tm
	case 7:
		return errors.New(g.str())
	case 8:
		return fmt.Errorf("wrapped: %w", errors.New("inner"))
	case 9:
		return dropinVerboseEr{g.str()}
	case 10:
		return []any{(*parityPtrErr)(nil), parityPanicStringer{}, (*parityValueStringer)(nil), parityPanicMarshaler{}}[g.pick(4)]
	case 11:
		return dropinPhase(g.str())
	case 12:
		return types.NamespacedName{Name: "mc", Namespace: []string{"", "default"}[g.pick(2)]}
	case 13:
		return klog.KRef([]string{"", "default"}[g.pick(2)], "web-0")
	case 14:
		return dropinSpec{Replicas: g.pick(5), Labels: map[string]string{"app": g.str()}, Ports: []int32{80, 443}, Took: d, When: tm}
	case 15:
		return &dropinSpec{Paused: &yes, Inner: &dropinSpec{Replicas: 1}}
	case 16:
		return (*dropinSpec)(nil)
	case 17:
		return map[string]int{"b": 2, "a": 1, g.str(): 3}
	case 18:
		if depth > 1 {
			return 1
		}
		return map[string]any{"nested": g.value(depth + 1), "list": []any{g.value(depth + 1), nil}}
	case 19:
		return []any{[]string{g.str(), "x"}, []int{1, -2}, []int8{1, -2}, []uint16{7}, []float32{0.1, 2}, []float64{1e21, 0.5}, []bool{true}, []int64{}, []string(nil)}[g.pick(9)]
	case 20:
		return []any{[]time.Duration{d, time.Millisecond}, []time.Time{tm, dropinTime}, []error{errors.New("a"), nil, dropinVerboseEr{"v"}}, []complex128{complex(1, 1)}}[g.pick(4)]
	case 21:
		return []dropinSpec{{Replicas: 1}, {Replicas: 2, Labels: map[string]string{"k": "v"}}}
	case 22:
		return []any{&i8, &s, &d, &tm, &f, &yes}[g.pick(6)]
	case 23:
		return []any{(*int)(nil), (*string)(nil), (*time.Time)(nil), (*time.Duration)(nil), (*metav1.Time)(nil)}[g.pick(5)]
	case 24:
		return []byte(g.str())
	case 25:
		return json.RawMessage(`{"raw":[1,2]}`)
	case 26:
		return metav1.ObjectMeta{Name: "om", Namespace: "ns", Labels: map[string]string{"a": "b"}}
	case 27:
		return &metav1.ObjectMeta{Name: "om", Namespace: "ns"}
	case 28:
		return metav1.NewTime(dropinTime)
	case 29:
		return dropinValuer{g.pick(9)}
	case 30:
		return dropinMarshaler{g.str()}
	case 31:
		return []*corev1.Pod{g.pod()}
	case 32:
		return struct {
			A int
			b string
			C any `json:"c,omitempty"`
		}{A: 1, b: "hidden", C: g.str()}
	default:
		if g.objects {
			return g.object()
		}
		return corev1.PodPhase("Running")
	}
}

// isDropinObject reports whether v is one of object's non-nil objects.
func isDropinObject(v any) bool {
	switch o := v.(type) {
	case *corev1.Pod:
		return o != nil
	case *corev1.ConfigMap, *unstructured.Unstructured, *corev1.Node:
		return true
	}
	return false
}

func (g dropinGen) key() string {
	return []string{"k", "replicas", "pod", "request", "a b", "q\"uote", "ünï", "error", "namespace", g.str()}[g.pick(10)]
}

// kv draws key/value pairs, sometimes broken as zapr reports: an odd
// number of arguments, or a key that is not a string (and then more pairs).
func (g dropinGen) kv(objects bool) []any {
	vg := g
	vg.objects = objects
	var kv []any
	for range g.pick(4) {
		kv = g.pair(kv, vg.value(0))
	}
	switch g.pick(8) {
	case 0:
		kv = append(kv, g.key()) // odd
	case 1:
		bad := []any{3, nil, errors.New("as key"), dropinSpec{}, g.object(), types.NamespacedName{Name: "k"}}[g.pick(6)]
		kv = append(kv, bad, vg.value(0), "after", 1)
	case 2:
		kv = append(g.pair(kv, vg.value(0)), g.object()) // odd, the ignored key an object
	}
	return kv
}

// pair appends a random key and v to kv.
func (g dropinGen) pair(kv []any, v any) []any {
	k := g.key()
	if k == "" && !g.objects && isDropinObject(v) {
		// A documented difference: in production the drop-in writes an
		// object's fields in place of an empty key.
		k = "obj"
	}
	return append(kv, k, v)
}

func (g dropinGen) ops() []dropinOp {
	var ops []dropinOp
	for range 1 + g.pick(6) {
		op := dropinOp{kind: g.pick(4), msg: g.str() + "msg"}
		switch op.kind {
		case opName:
			op.name = []string{"setup", "controller", "a.b", g.str()}[g.pick(4)]
		case opValues:
			op.kv = g.kv(g.objects)
		case opInfo:
			op.v = g.pick(3)
			op.kv = g.kv(true)
		default:
			op.err = []error{nil, errors.New("boom"), (*parityPtrErr)(nil), dropinVerboseEr{"verbose"}}[g.pick(4)]
			op.kv = g.kv(true)
		}
		ops = append(ops, op)
	}
	return ops
}

// TestDropInRandomizedMatchesControllerRuntime runs random programs of
// logr calls (names, values of every kind a reconciler logs, V levels,
// errors, misuse) against controller-runtime's zap and the drop-in, in
// development (console) and production (JSON) mode, and compares the
// output line for line, timestamps aside, stack traces included. Where
// controller-runtime's development mode panics after zapr's DPanic line,
// the reference goes on with what zapr logs after a DPanic that returns;
// the drop-in never panics and must write the same lines.
func TestDropInRandomizedMatchesControllerRuntime(t *testing.T) {
	small := func(o *ourzap.Options) {
		o.HandlerOptions = &asyncbus.Options{Ring: asyncbus.RingOptions{Capacity: 64 << 10}}
	}
	for _, dev := range []bool{false, true} {
		t.Run(fmt.Sprintf("dev=%v", dev), func(t *testing.T) {
			g := dropinGen{r: rand.New(rand.NewPCG(29, map[bool]uint64{false: 1, true: 2}[dev])), objects: dev}
			misuse := 0
			for iter := range 1000 {
				ops := g.ops()
				var want, got bytes.Buffer
				cr := []crzap.Opts{crzap.UseDevMode(dev), crzap.WriteTo(&want)}
				ours := []ourzap.Opts{ourzap.UseDevMode(dev), ourzap.WriteTo(&got), small}
				if g.pick(3) == 0 { // V(2) enabled
					cr, ours = append(cr, crzap.Level(zapcore.Level(-2))), append(ours, ourzap.Level(zapcore.Level(-2)))
				}
				// Stack traces from the default level, Info, DPanic or Panic.
				if st := g.pick(4); st > 0 {
					crl := []zapcore.Level{0, zapcore.InfoLevel, zapcore.DPanicLevel, zapcore.PanicLevel}[st]
					cr, ours = append(cr, crzap.StacktraceLevel(crl)), append(ours, ourzap.StacktraceLevel(crl)) // zapcore's levels, as scaffolds pass them
				}
				crl, ourl := crzap.New(cr...), ourzap.New(ours...)
				var panics [2][]string
				for i, l := range []logr.Logger{crl, ourl} {
					panics[i] = runDropinOps(l, ops) // one call site: the stack traces match
				}
				crPanics, ourPanics := panics[0], panics[1]
				require.NoError(t, logrbridge.Close(ourl))
				require.Empty(t, ourPanics, "the drop-in never panics")
				dpanics := strings.Count(want.String(), map[bool]string{false: `"level":"dpanic"`, true: "\tDPANIC\t"}[dev])
				misuse += dpanics
				if dev {
					require.Len(t, crPanics, dpanics, "controller-runtime's development mode panics after each DPanic line")
				} else {
					require.Empty(t, crPanics)
				}
				require.Equal(t, normalize(want.String()), normalize(got.String()), "iteration %d: %v", iter, ops)
			}
			require.Positive(t, misuse, "the programs include logr misuse")
		})
	}
}
