package integration

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/rs/zerolog"
	"github.com/sirupsen/logrus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/logwriter"
)

// zap: the Writer is zap's WriteSyncer (zapcore.AddSync keeps its Sync,
// which zap calls for Fatal and Panic); its drop markers are zap's JSON.
// The time key is left out only to make the output fixed.
func Example_logwriterZap() {
	w := logwriter.New(os.Stdout, &logwriter.Options{Format: asyncbus.ZapJSON})
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = ""
	logger := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(w), zap.InfoLevel))
	logger.Info("served", zap.Int("status", 200))
	logger.Error("failed", zap.String("err", "timeout")) // in the output before Error returns
	_ = w.Close()
	st := w.Stats()
	fmt.Println(st.Written, st.LoggedInfo, st.LoggedError)
	// Output:
	// {"level":"info","msg":"served","status":200}
	// {"level":"error","msg":"failed","err":"timeout"}
	// 2 1 1
}

// zerolog: zerolog.New takes the Writer as it is; the level is read from
// each line, so no LevelWriter adapter is needed.
func Example_logwriterZerolog() {
	w := logwriter.New(os.Stdout, nil) // JSON drop markers
	logger := zerolog.New(w)
	logger.Info().Int("status", 200).Msg("served")
	logger.Error().Str("err", "timeout").Msg("failed")
	_ = w.Close()
	st := w.Stats()
	fmt.Println(st.Written, st.LoggedInfo, st.LoggedError)
	// Output:
	// {"level":"info","status":200,"message":"served"}
	// {"level":"error","err":"timeout","message":"failed"}
	// 2 1 1
}

// logrus: SetOutput; the text formatter's level= token gives the level,
// and the drop markers are logfmt.
func Example_logwriterLogrus() {
	w := logwriter.New(os.Stdout, &logwriter.Options{Format: asyncbus.Logfmt})
	logger := logrus.New()
	logger.SetOutput(w)
	logger.SetFormatter(&logrus.TextFormatter{DisableTimestamp: true})
	logger.WithField("status", 200).Info("served")
	logger.WithField("err", "timeout").Error("failed")
	_ = w.Close()
	st := w.Stats()
	fmt.Println(st.Written, st.LoggedInfo, st.LoggedError)
	// Output:
	// level=info msg=served status=200
	// level=error msg=failed err=timeout
	// 2 1 1
}

// The standard log: SetOutput; its lines carry no level, so they count as
// Info, except log.Fatal's and log.Panic's, which are written and synced
// before the program ends.
func Example_logwriterStandardLog() {
	w := logwriter.New(os.Stdout, &logwriter.Options{Format: asyncbus.Text})
	logger := log.New(w, "app: ", 0) // log.SetOutput(w) for the standard logger
	logger.Print("served")
	_ = w.Close()
	fmt.Println(w.Stats().Written, w.Stats().LoggedInfo)
	// Output:
	// app: served
	// 1 1
}

// klog's text output: SetOutput with logtostderr off and one_output on
// (else each error line is written once per severity at or below its
// own); the header's severity letter gives the level. The header is left
// out only to make the output fixed.
func Example_logwriterKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Parse([]string{"-logtostderr=false", "-one_output=true", "-stderrthreshold=FATAL", "-skip_headers=true"})
	w := logwriter.New(os.Stdout, &logwriter.Options{Format: asyncbus.Text})
	klog.SetOutput(w)
	klog.InfoS("served", "status", 200)
	klog.ErrorS(nil, "failed", "err", "timeout")
	klog.Flush()
	_ = w.Close()
	fmt.Println(w.Stats().Written)
	// Output:
	// "served" status=200
	// "failed" err="timeout"
	// 2
}
