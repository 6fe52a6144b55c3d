package asyncbustest_test

import (
	"fmt"
	"log/slog"

	"github.com/asyncbus/asyncbus/asyncbustest"
)

func ExampleRecorder() {
	rec := asyncbustest.NewRecorder()
	log := slog.New(rec)

	log.With("svc", "api").WithGroup("req").Warn("slow request", "ms", 1500)
	log.Info("done")

	for _, r := range rec.Records() {
		fmt.Println(r)
	}
	slow := rec.Match(slog.LevelWarn, "slow request", "svc", "api", "req.ms", 1500)
	fmt.Println("matches:", len(slow))
	ms, _ := slow[0].Value("req", "ms")
	fmt.Println("req.ms:", ms.Int64())
	// Output:
	// WARN "slow request" svc=api req=[ms=1500]
	// INFO "done"
	// matches: 1
	// req.ms: 1500
}
