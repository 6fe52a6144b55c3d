package encode

import (
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// allocCase is a value of a type the plans write without allocating.
type allocCase struct {
	name string
	v    any
}

type allocInner struct {
	N  int     `json:"n"`
	F  float32 `json:"f"`
	On bool    `json:"on,omitempty"`
}

type allocAll struct {
	S     string            `json:"s"`
	Q     int64             `json:"q,string"`
	QS    string            `json:"qs,string"`
	U     uint16            `json:"u"`
	F     float64           `json:"f"`
	T     time.Time         `json:"t"`
	TP    *time.Time        `json:"tp"`
	D     time.Duration     `json:"d"`
	B     []byte            `json:"b"`
	Num   json.Number       `json:"num"`
	Raw   json.RawMessage   `json:"raw"`
	In    allocInner        `json:"in"`
	P     *allocInner       `json:"p"`
	Nil   *allocInner       `json:"nil"`
	Any   any               `json:"any"`
	Arr   [3]int            `json:"arr"`
	Strs  []string          `json:"strs"`
	Items []allocInner      `json:"items"`
	M     map[string]int    `json:"m"`
	MI    map[int]string    `json:"mi"`
	MS    map[string]string `json:"ms"`
	Empty []int             `json:"empty,omitempty"`
	GEmb
}

func allocCases() []allocCase {
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.FixedZone("X", 3600))
	all := allocAll{
		S: "a \"quoted\" string\n", Q: 42, QS: "q", U: 7, F: 1.5e-7, T: t0, TP: &t0, D: time.Second,
		B: []byte("bytes"), Num: "12.5", Raw: json.RawMessage(`{"a":[1,2]}`), In: allocInner{N: 1, F: 0.1},
		P: &allocInner{N: 2}, Any: &allocInner{N: 3}, Arr: [3]int{1, 2, 3}, Strs: []string{"x", "y"},
		Items: []allocInner{{N: 4}, {N: 5, On: true}}, M: map[string]int{"b": 2, "a": 1},
		MI: map[int]string{10: "x", 9: "y"}, MS: map[string]string{"k": "v", "j": "w"},
		GEmb: GEmb{X: 1, Name: "emb"},
	}
	return []allocCase{
		{"struct of every covered kind", all},
		{"pointer to it", &all},
		{"slice of it", []allocAll{all, all}},
		{"[]string", []string{"a", "b"}},
		{"[]int", []int{1, 2, 3}},
		{"[]float64", []float64{1.5, 2}},
		{"[]time.Time", []time.Time{t0, t0}},
		{"map[string]any", map[string]any{"a": 1.5, "b": "s"}},
		{"json.RawMessage", json.RawMessage(" [1, 2] ")},
		{"[]byte", []byte("abc")},
	}
}

// TestAnyPlansDoNotAllocate: once warm, the plans write every covered kind
// with no allocation, alone and in a record. (Maps sort their keys in
// pooled scratch space, which the race detector's sync.Pool drops at
// random: the count is checked without it.)
func TestAnyPlansDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	e := New(Options{Format: JSON})
	for _, c := range allocCases() {
		buf := make([]byte, 0, 8192)
		buf, ok := appendJSONNative(buf, c.v)
		require.True(t, ok, c.name)
		require.Equal(t, encodingJSON(c.v), string(buf), c.name)
		allocs := testing.AllocsPerRun(100, func() { buf, _ = appendJSONNative(buf[:0], c.v) })
		require.Zero(t, allocs, c.name)

		r := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{slog.Any("v", c.v)})
		buf = e.Append(buf[:0], r, nil)
		allocs = testing.AllocsPerRun(100, func() { buf = e.Append(buf[:0], r, nil) })
		require.Zero(t, allocs, c.name)
	}
}
