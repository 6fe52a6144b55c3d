package otlpsink

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/asyncbus/asyncbus/internal/plural"
)

// StatusError is a non-2xx answer from the collector.
type StatusError struct {
	// Code is the HTTP status code of the response.
	Code int
	// Status is the response's status text, such as "503 Service
	// Unavailable" (the collector's own reason phrase over HTTP/1).
	Status string
	// Body is the start of the response body, trimmed of surrounding
	// white space.
	Body      string
	Permanent bool // not retried: the batch is counted as failed
}

// Error implements error: the status text, whether it is retried, and
// the body when there is one.
func (e *StatusError) Error() string {
	kind := "retryable"
	if e.Permanent {
		kind = "permanent"
	}
	status := e.Status
	if status == "" {
		status = strings.TrimSpace(fmt.Sprintf("%d %s", e.Code, http.StatusText(e.Code)))
	}
	if e.Body == "" {
		return fmt.Sprintf("otlpsink: collector answered %s (%s)", status, kind)
	}
	return fmt.Sprintf("otlpsink: collector answered %s (%s): %s", status, kind, e.Body)
}

// permanentError is a failure to send that no retry can cure: the
// collector's certificate fails verification, the endpoint does not speak
// TLS, or the request cannot be built. The batch is counted as failed.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return "otlpsink: not retried: " + e.err.Error() }

func (e *permanentError) Unwrap() error { return e.err }

// isPermanent reports whether err ends the sending of its batch for good.
func isPermanent(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Permanent
	}
	var ge *GRPCError
	if errors.As(err, &ge) {
		return ge.Permanent
	}
	var pe *permanentError
	return errors.As(err, &pe)
}

// isTLSConfigError reports whether err, from http.Client.Do, is a TLS
// verification or protocol mismatch: a configuration problem, which the
// OTel SDK does not retry either (it retries only temporary errors).
func isTLSConfigError(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		record    tls.RecordHeaderError
	)
	return errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &record)
}

// gaveUpError wraps the last error when retrying stops (Close or replay
// deadline), with what stopped it and after how many attempts.
type gaveUpError struct {
	err      error
	why      error // errCloseDeadline, the Close context's end, or nil (the replay deadline)
	attempts int   // requests made for the batch
}

func (e *gaveUpError) Error() string {
	what := "the collector did not accept the records"
	if op := (*net.OpError)(nil); errors.As(e.err, &op) && op.Op == "dial" {
		what = "the collector is unreachable"
	}
	why := "the replay deadline passed"
	if e.why != nil {
		why = e.why.Error()
	}
	return fmt.Sprintf("otlpsink: %s; gave up after %s (%s): %v", what, plural.Count(e.attempts, "attempt", "attempts"), why, e.err)
}

// errCloseDeadline ends retrying at the handler's Close deadline (or
// Options.CloseTimeout).
var errCloseDeadline = errors.New("the close deadline passed")

func (e *gaveUpError) Unwrap() error { return e.err }
