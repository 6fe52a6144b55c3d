package logrbridge

import (
	"log/slog"
	"os"

	"github.com/go-logr/logr"

	"github.com/asyncbus/asyncbus"
)

// New returns a logger built from opts like controller-runtime's zap.New,
// backed by an asyncbus handler: development mode writes the console format
// with V(1) enabled and stack traces at Warn and above; production mode
// writes JSON at Info with stack traces at Error and above. Nothing is
// sampled. Records at Error and above are written synchronously (so the
// "unable to start manager" line before os.Exit is not lost); call [Flush]
// or [Close] on the returned logger before exiting to keep the rest.
func New(opts ...Opts) logr.Logger {
	l, _ := NewWithHandler(opts...)
	return l
}

// NewWithHandler is New that also returns the asyncbus handler behind the
// logger, for Stats, Flush and Close.
func NewWithHandler(opts ...Opts) (logr.Logger, *asyncbus.Handler) {
	o := &Options{}
	for _, opt := range opts {
		opt(o)
	}
	o.addDefaults(os.Stderr)
	var ao asyncbus.Options
	if o.HandlerOptions != nil {
		ao = *o.HandlerOptions
	}
	ao.Level = o.Level
	ao.AddSource = o.AddSource
	ao.Format = formatOf(o.Encoding)
	if ao.SyncLevel == nil {
		ao.SyncLevel = slog.LevelError
	}
	if o.TimeEncoder != nil {
		ao.ReplaceAttr = chainReplace(timeReplacer(o.TimeEncoder), ao.ReplaceAttr)
	}
	h := asyncbus.NewHandler(o.DestWriter, &ao)
	lopts := append([]Option{
		StackTraces(o.StacktraceLevel),
		ShrinkObjects(!o.Development),
		RecordCaller(o.AddSource),
	}, o.LoggerOptions...)
	return NewLogger(h, lopts...), h
}

// formatOf maps Options.Encoding to an asyncbus format; an unknown name
// (only possible when set in code: the flag rejects it) means JSON.
func formatOf(enc string) asyncbus.Format {
	switch enc {
	case EncodingConsole:
		return asyncbus.Console
	case EncodingText:
		return asyncbus.Text
	case EncodingLogfmt:
		return asyncbus.Logfmt
	default:
		return asyncbus.JSON
	}
}

// chainReplace applies first, then the user's second (when set).
func chainReplace(first, second func([]string, slog.Attr) slog.Attr) func([]string, slog.Attr) slog.Attr {
	if second == nil {
		return first
	}
	return func(groups []string, a slog.Attr) slog.Attr {
		return second(groups, first(groups, a))
	}
}
