package bus

// bareErrno returns err: Plan 9's system errors are strings, not numbers.
func bareErrno(err error) error { return err }
