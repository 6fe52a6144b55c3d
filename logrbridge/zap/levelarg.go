package zap

import (
	"fmt"
	"log/slog"
)

// zapLevelNames are zapcore.Level's names (its String method) as this
// package's levels.
var zapLevelNames = map[string]slog.Level{
	"debug":  DebugLevel,
	"info":   InfoLevel,
	"warn":   WarnLevel,
	"error":  ErrorLevel,
	"dpanic": DPanicLevel,
	"panic":  PanicLevel,
	"fatal":  FatalLevel,
}

// leveler is the level Level and StacktraceLevel were given: a
// slog.Leveler as it is; otherwise a zapcore.Level, or a zap.AtomicLevel
// (read once, here), by the name its String method gives ("debug",
// "Level(-3)" for V(3)). Anything else is an error, and the default level
// stays.
func leveler(v fmt.Stringer) (slog.Leveler, error) {
	if l, ok := v.(slog.Leveler); ok {
		return l, nil
	}
	name := v.String()
	if l, ok := zapLevelNames[name]; ok {
		return l, nil
	}
	var n int8
	var rest string
	if k, _ := fmt.Sscanf(name, "Level(%d)%s", &n, &rest); k == 1 {
		return slog.Level(n), nil
	}
	return nil, fmt.Errorf("logrbridge/zap: the level %q (a %T) is neither a slog.Leveler nor a zap level; the default level is used", name, v)
}
