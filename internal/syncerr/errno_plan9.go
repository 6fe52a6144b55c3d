package syncerr

// errnoOf reports no number: Plan 9's system errors are strings.
func errnoOf(error) (uintptr, bool) { return 0, false }
