// Package term decides whether output to a writer gets ANSI colours: the
// terminal test of each platform and the environment rules (NO_COLOR,
// FORCE_COLOR, CLICOLOR, CLICOLOR_FORCE, TERM=dumb) shared by the Console
// format and cmd/asyncbus-pretty.
package term

import (
	"io"
	"os"
)

// Colors reports whether output to w is coloured: always when forced (w, if
// a Windows console, is switched to ANSI processing so that the colours
// show), else as Auto decides from the process's environment and whether w
// is a terminal that shows ANSI colours.
func Colors(w io.Writer, force bool) bool {
	if force {
		EnableANSI(w)
		return true
	}
	return Auto(os.Getenv, func() bool { return IsTerminal(w) && EnableANSI(w) })
}

// Auto applies the automatic colour rules: what the user asked for through
// the environment (no-color.org, force-color.org, bixense.com/clicolors; a
// request for no colour wins), else whether the output is a terminal.
func Auto(getenv func(string) string, terminal func() bool) bool {
	set := func(name string) bool { v := getenv(name); return v != "" && v != "0" }
	switch {
	case getenv("NO_COLOR") != "", getenv("CLICOLOR") == "0", getenv("TERM") == "dumb":
		return false
	case set("FORCE_COLOR"), set("CLICOLOR_FORCE"):
		return true
	}
	return terminal()
}
