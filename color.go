package asyncbus

import (
	"io"
	"os"

	"github.com/asyncbus/asyncbus/internal/term"
)

// useColor reports whether the Console format colours its output to w under
// mode: always for ColorAlways, never for ColorNever, and for ColorAuto as
// term.Auto decides from the environment. On Windows it also switches a
// console to ANSI processing, so that the colours show.
func useColor(mode ColorMode, w io.Writer) bool {
	switch mode {
	case ColorAlways:
		term.EnableANSI(w)
		return true
	case ColorAuto:
		return term.Auto(os.Getenv, func() bool { return term.IsTerminal(w) && term.EnableANSI(w) })
	}
	return false
}
