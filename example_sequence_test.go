package asyncbus_test

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/asyncbus/asyncbus"
)

// seqLokiEncoder is lokiEncoder with the two methods that carry
// Options.Features.Sequence's numbers in its own format: seq and run as
// the first labels.
type seqLokiEncoder struct{ lokiEncoder }

// AppendSequence writes `{seq="N",run="R",` in place of the record's
// opening brace; a line that is not one of its records gets no number.
func (seqLokiEncoder) AppendSequence(dst, rec []byte, seq uint64, run string) ([]byte, int) {
	if !strings.HasPrefix(string(rec), "{") {
		return nil, 0
	}
	dst = strconv.AppendUint(append(dst, `{seq="`...), seq, 10)
	return append(append(append(dst, `",run="`...), run...), `",`...), 1
}

// AppendDropMarker writes the line that stands for n lost records.
func (seqLokiEncoder) AppendDropMarker(dst []byte, _ time.Time, n uint64) []byte {
	return append(strconv.AppendUint(append(dst, `{level="warn"} "records dropped" dropped="`...), n, 10), "\"\n"...)
}

// An output's own Encoder carries the sequence numbers when it has
// AppendSequence and AppendDropMarker (the run identity, random per
// handler, is replaced by RUN here).
func ExampleOpenWithEncoder_sequence() {
	out := &pushOutput{}
	h, err := asyncbus.OpenWithEncoder(out, seqLokiEncoder{}, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}})
	if err != nil {
		fmt.Println(err)
		return
	}
	log := slog.New(h)
	log.Info("connected", "host", "db1")
	log.Warn("slow", "ms", 250)
	if err := h.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Print(strings.ReplaceAll(out.store.String(), h.Stats().RunID, "RUN"))
	// Output:
	// {seq="1",run="RUN",level="info"} "connected" host="db1"
	// {seq="2",run="RUN",level="warn"} "slow" ms="250"
}
