package sampling_test

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/sampling"
)

func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func Example() {
	ab := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{ReplaceAttr: noTime})
	// Per hour (one window for the whole example; the default tick is a
	// second) and per (level, message, logger): the first 2, then every 3rd.
	h, err := sampling.NewHandler(ab, sampling.Config{Tick: time.Hour, First: 2, Thereafter: 3})
	if err != nil {
		panic(err)
	}
	log := slog.New(h.Named("cache"))
	for i := 1; i <= 8; i++ {
		log.Info("miss", "i", i) // keeps 1, 2, 5 and 8
	}
	log.Error("evicted all") // Error and above are never sampled
	// Report writes the pending "suppressed" markers now (otherwise the
	// first record of the next window does); then close the output.
	_ = h.Sampler().Report()
	_ = ab.Close()
	fmt.Printf("%+v\n", h.Sampler().Stats())
	// Output:
	// {"level":"INFO","msg":"miss","logger":"cache","i":1}
	// {"level":"INFO","msg":"miss","logger":"cache","i":2}
	// {"level":"INFO","msg":"miss","logger":"cache","i":5}
	// {"level":"INFO","msg":"miss","logger":"cache","i":8}
	// {"level":"ERROR","msg":"evicted all","logger":"cache"}
	// {"level":"INFO","msg":"suppressed 4 similar records","logger":"cache","sampled_msg":"miss"}
	// {Kept:4 Suppressed:4 Markers:1 Reported:4 Unmarked:0}
}

// Example_optionsSampler installs a Sampler in the asyncbus handler itself:
// refused records are never encoded, they are counted in Stats.Sampled,
// and the markers are written by the handler (never sampled). Close
// writes the markers still pending.
func Example_optionsSampler() {
	// Per hour (one window for the whole example) and per (level, message,
	// logger): the first 2, then every 3rd.
	s, err := sampling.NewSampler(sampling.Config{Tick: time.Hour, First: 2, Thereafter: 3})
	if err != nil {
		panic(err)
	}
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sampler: s}, ReplaceAttr: noTime})
	log := slog.New(h.Named("cache"))
	for i := 1; i <= 8; i++ {
		log.Info("miss", "i", i) // keeps 1, 2, 5 and 8
	}
	log.Error("evicted all") // Error and above are never sampled
	_ = h.Close()
	st := h.Stats()
	fmt.Printf("written %d, sampled %d, markers %d\n", st.Written, st.Sampled, st.SampleMarkers)
	// Output:
	// {"level":"INFO","msg":"miss","logger":"cache","i":1}
	// {"level":"INFO","msg":"miss","logger":"cache","i":2}
	// {"level":"INFO","msg":"miss","logger":"cache","i":5}
	// {"level":"INFO","msg":"miss","logger":"cache","i":8}
	// {"level":"ERROR","msg":"evicted all","logger":"cache"}
	// {"level":"INFO","msg":"suppressed 4 similar records","logger":"cache","sampled_msg":"miss"}
	// written 6, sampled 4, markers 1
}
