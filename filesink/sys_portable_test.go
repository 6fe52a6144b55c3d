//go:build !unix

package filesink

// preallocUnsupportedErrs are the preallocate errors that mean the file
// system cannot preallocate at all.
var preallocUnsupportedErrs = []error{errPreallocUnsupported}
