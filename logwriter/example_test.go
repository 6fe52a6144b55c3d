package logwriter_test

import (
	"fmt"
	"log"
	"os"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/logwriter"
)

// The standard log on the bus: its lines carry no level, so they count as
// Info, except those of log.Fatal and log.Panic, which are written and
// synced before the program ends. zap, zerolog, logrus and klog take the
// Writer the same way (zapcore.AddSync(w), zerolog.New(w),
// logrus.SetOutput(w), klog.SetOutput(w)).
func ExampleNew() {
	w := logwriter.New(os.Stdout, &logwriter.Options{Format: asyncbus.Text})
	logger := log.New(w, "app: ", 0) // or log.SetOutput(w)
	logger.Print("started")
	logger.Printf("listening on %s", ":8080")
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	st := w.Stats()
	fmt.Println(st.Written, st.Dropped)
	// Output:
	// app: started
	// app: listening on :8080
	// 2 0
}
