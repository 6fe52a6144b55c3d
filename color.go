package asyncbus

import (
	"io"
	"os"
)

// useColor reports whether the Console format colours its output to w under
// mode: always for ColorAlways, never for ColorNever, and for ColorAuto as
// colorAuto decides from the environment. On Windows it also switches a
// console to ANSI processing, so that the colours show.
func useColor(mode ColorMode, w io.Writer) bool {
	switch mode {
	case ColorAlways:
		enableANSI(w)
		return true
	case ColorAuto:
		return colorAuto(os.Getenv, func() bool { return isTerminal(w) && enableANSI(w) })
	}
	return false
}

// colorAuto applies ColorAuto's rules: what the user asked for through the
// environment (no-color.org, force-color.org, bixense.com/clicolors; a
// request for no colour wins), else whether the output is a terminal.
func colorAuto(getenv func(string) string, terminal func() bool) bool {
	set := func(name string) bool { v := getenv(name); return v != "" && v != "0" }
	switch {
	case getenv("NO_COLOR") != "", getenv("CLICOLOR") == "0", getenv("TERM") == "dumb":
		return false
	case set("FORCE_COLOR"), set("CLICOLOR_FORCE"):
		return true
	}
	return terminal()
}
