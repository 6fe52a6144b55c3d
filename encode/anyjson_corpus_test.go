package encode

import (
	"database/sql"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"net/netip"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// A Kubernetes-like object, declared as the API types are: embedded
// TypeMeta inline, ObjectMeta with labels, annotations and times (a
// metav1.Time-like wrapper with its own MarshalJSON on the value and a
// pointer to it), owner references, a spec and a status.
type kTypeMeta struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}

type kTime struct{ time.Time }

func (t kTime) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339))
}

type kOwnerRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	Controller *bool  `json:"controller,omitempty"`
}

type kObjectMeta struct {
	Name              string            `json:"name,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	UID               string            `json:"uid,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	Generation        int64             `json:"generation,omitempty"`
	CreationTimestamp kTime             `json:"creationTimestamp,omitempty"`
	DeletionTimestamp *kTime            `json:"deletionTimestamp,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	OwnerReferences   []kOwnerRef       `json:"ownerReferences,omitempty"`
	Finalizers        []string          `json:"finalizers,omitempty"`
}

type kContainer struct {
	Name  string            `json:"name"`
	Image string            `json:"image,omitempty"`
	Args  []string          `json:"args,omitempty"`
	Env   map[string]string `json:"env,omitempty"`
	Ports []int32           `json:"ports,omitempty"`
}

type kPod struct {
	kTypeMeta   `json:",inline"`
	kObjectMeta `json:"metadata,omitempty"`
	Spec        struct {
		Containers    []kContainer `json:"containers"`
		NodeName      string       `json:"nodeName,omitempty"`
		RestartPolicy string       `json:"restartPolicy,omitempty"`
	} `json:"spec"`
	Status struct {
		Phase     string     `json:"phase,omitempty"`
		StartTime *kTime     `json:"startTime,omitempty"`
		PodIP     netip.Addr `json:"podIP,omitzero"`
	} `json:"status"`
}

// kNamespacedName is controller-runtime's NamespacedName.
type kNamespacedName struct {
	Namespace string
	Name      string
}

func kubePod() *kPod {
	yes := true
	created := kTime{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	p := &kPod{kTypeMeta: kTypeMeta{Kind: "Pod", APIVersion: "v1"}}
	p.kObjectMeta = kObjectMeta{
		Name: "web-7d4b9c", Namespace: "prod", UID: "3f1c-42", ResourceVersion: "918273", Generation: 3,
		CreationTimestamp: created,
		Labels:            map[string]string{"app": "web", "pod-template-hash": "7d4b9c", "tier": "frontend"},
		Annotations:       map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"Pod"}`, "note": "<b>&é\u2028"},
		OwnerReferences:   []kOwnerRef{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "9a", Controller: &yes}},
		Finalizers:        []string{"foregroundDeletion"},
	}
	p.Spec.Containers = []kContainer{{Name: "app", Image: "nginx:1.27", Args: []string{"-g", "daemon off;"}, Env: map[string]string{"B": "2", "A": "1"}, Ports: []int32{80, 443}}}
	p.Spec.RestartPolicy = "Always"
	p.Status.Phase = "Running"
	p.Status.StartTime = &created
	p.Status.PodIP = netip.MustParseAddr("10.1.2.3")
	return p
}

// TestAnyCorpusMatchesSlog compares real-world values written in slog.Any
// attributes with slog's JSONHandler, and the plans' output with
// encoding/json's; native lists those the plans must write themselves.
func TestAnyCorpusMatchesSlog(t *testing.T) {
	u, err := url.Parse("https://user:pw@example.com:8443/a%20b/c?q=1&r=<x>#frag")
	require.NoError(t, err)
	st, err := structpb.NewStruct(map[string]any{"a": 1.5, "b": []any{"x", true, nil}, "c": map[string]any{"d": "e"}})
	require.NoError(t, err)
	pod := kubePod()
	cases := []struct {
		name   string
		v      any
		native bool
	}{
		{"kubernetes pod", pod, true},
		{"kubernetes pod value", *pod, true},
		{"kubernetes pods", []*kPod{pod, nil, pod}, true},
		{"namespaced name", kNamespacedName{Namespace: "prod", Name: "web"}, true},
		{"url.URL", *u, true},
		{"*url.URL", u, true},
		{"net.IP v4", net.ParseIP("192.168.0.1"), true},
		{"net.IP v6", net.ParseIP("2001:db8::1"), true},
		{"nil net.IP", net.IP(nil), true},
		{"*big.Int", big.NewInt(0).Lsh(big.NewInt(1), 100), true},
		{"big.Int in a struct", struct{ N big.Int }{N: *big.NewInt(-7)}, true},
		{"big.Int behind a pointer", &struct{ N big.Int }{N: *big.NewInt(-7)}, true},
		{"*big.Float", big.NewFloat(1.25), true},
		{"sql.NullString", sql.NullString{String: "s", Valid: true}, true},
		{"sql.NullTime", sql.NullTime{Time: fixedTime, Valid: true}, true},
		{"netip.Addr", netip.MustParseAddr("fe80::1%eth0"), true},
		{"netip.AddrPort", netip.MustParseAddrPort("[::1]:80"), true},
		{"netip.Prefix", netip.MustParsePrefix("10.0.0.0/8"), true},
		{"zero netip.Addr", netip.Addr{}, true},
		{"time.Duration", 1500 * time.Millisecond, true},
		{"time.Month", time.March, true},
		{"time.Location", time.UTC, true},
		{"json.RawMessage", json.RawMessage(` {"a" : [1, 2.5e3, "x y"]} `), true},
		{"json.Number", json.Number("-1.5E+10"), true},
		{"structpb.Struct", st, true},
		{"timestamppb.Timestamp", timestamppb.New(fixedTime), true},
		{"durationpb.Duration", durationpb.New(90 * time.Second), true},
		{"error in a struct", struct{ Err error }{Err: errors.New("boom")}, true},
		{"wrapped errors", struct{ Err error }{Err: errors.Join(errors.New("a"), errors.New("b"))}, true},
		{"map[netip.Addr]int", map[netip.Addr]int{netip.MustParseAddr("10.0.0.2"): 2, netip.MustParseAddr("10.0.0.10"): 10}, true},
		{"map[int]bool", map[int]bool{10: true, 9: false, -1: true}, true},
		{"nil map", map[string]int(nil), true},
		{"empty map", map[string]int{}, true},
		{"nil slice", []string(nil), true},
		{"empty slice", []string{}, true},
		{"[]any", []any{1, "a", nil, 2.5, []int{1}, map[string]any{"z": 1, "a": nil}}, true},
		{"float32s", []float32{0.1, 1e21, 1e-7, -0, 3.4e38}, true},
		{"float64s", []float64{0.1, 1e21, 1e20, 1e-7, 1e-6, 5e-324, 1.7976931348623157e308}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			native := checkAnyValue(t, c.v) && !fallsBack(reflect.TypeOf(c.v), map[reflect.Type]bool{})
			require.Equal(t, c.native, native, "written by the plans alone")
		})
	}
}
