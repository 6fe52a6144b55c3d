package bus

// bareErrno returns err: Plan 9's system errors are strings, not numbers.
func bareErrno(err error) error { return err }

// errnoOf reports no number: Plan 9's system errors are strings.
func errnoOf(error) (uintptr, bool) { return 0, false }
