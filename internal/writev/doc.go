// Package writev writes a batch of records to a file descriptor with one
// writev(2) call per up to Max records (Linux; elsewhere New returns nil).
//
// Package unsafe serves one purpose here: the iovec array handed to the
// system call (the reason is at the site).
package writev
