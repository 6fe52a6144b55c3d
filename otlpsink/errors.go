package otlpsink

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// StatusError is a non-2xx answer from the collector.
type StatusError struct {
	// Code is the HTTP status code of the response.
	Code int
	// Body is the start of the response body.
	Body      string
	Permanent bool // not retried: the batch is counted as failed
}

// Error implements error.
func (e *StatusError) Error() string {
	kind := "retryable"
	if e.Permanent {
		kind = "permanent"
	}
	return fmt.Sprintf("otlpsink: collector answered %d (%s): %s", e.Code, kind, e.Body)
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

// gaveUpError wraps the last error when retrying stops (Close or replay deadline).
type gaveUpError struct{ err error }

func (e *gaveUpError) Error() string { return "otlpsink: gave up retrying: " + e.err.Error() }

func (e *gaveUpError) Unwrap() error { return e.err }
