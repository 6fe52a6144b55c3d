package asyncbus

import (
	"io"

	"github.com/asyncbus/asyncbus/internal/term"
)

// useColor reports whether the Console format colours its output to w under
// mode: always for ColorAlways, never for ColorNever, and for ColorAuto as
// term.Auto decides from the environment. On Windows it also switches a
// console to ANSI processing, so that the colours show.
func useColor(mode ColorMode, w io.Writer) bool {
	switch mode {
	case ColorAlways:
		return term.Colors(w, true)
	case ColorAuto:
		return term.Colors(w, false)
	}
	return false
}
