// OTLP/gRPC without the grpc module: one unary call of LogsService/Export
// is an HTTP/2 POST of one length-prefixed message, answered by one
// message and the call's status in the trailers (or in the headers of a
// trailers-only response).

package otlpsink

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The gRPC status codes (google.golang.org/grpc/codes) this package names.
const (
	grpcOK                uint32 = 0
	grpcCancelled         uint32 = 1
	grpcUnknown           uint32 = 2
	grpcDeadlineExceeded  uint32 = 4
	grpcResourceExhausted uint32 = 8
	grpcAborted           uint32 = 10
	grpcOutOfRange        uint32 = 11
	grpcUnimplemented     uint32 = 12
	grpcInternal          uint32 = 13
	grpcUnavailable       uint32 = 14
	grpcDataLoss          uint32 = 15
	grpcUnauthenticated   uint32 = 16
)

var grpcCodeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED",
}

// GRPCError is a gRPC status other than OK from the collector, or the
// status a non-gRPC answer stands for (an HTTP error from a proxy, a
// malformed response).
type GRPCError struct {
	// Code is the gRPC status code, such as 14 (UNAVAILABLE).
	Code uint32
	// Message is the collector's grpc-message, percent-decoded, or what
	// was wrong with an answer that carried no status.
	Message string
	// RetryDelay is the delay of a google.rpc.RetryInfo detail in
	// grpc-status-details-bin (0 if none), which replaces the back-off.
	RetryDelay time.Duration
	// Permanent: not retried, the batch is counted as failed. Retried, as
	// the OTLP specification says, are CANCELLED, DEADLINE_EXCEEDED,
	// ABORTED, OUT_OF_RANGE, UNAVAILABLE, DATA_LOSS, and
	// RESOURCE_EXHAUSTED when it carries a RetryInfo.
	Permanent bool
}

// Error implements error: the status, whether it is retried, the message.
func (e *GRPCError) Error() string {
	kind := "retryable"
	if e.Permanent {
		kind = "permanent"
	}
	name := "code " + strconv.FormatUint(uint64(e.Code), 10)
	if int(e.Code) < len(grpcCodeNames) {
		name = grpcCodeNames[e.Code]
	}
	if e.Message == "" {
		return fmt.Sprintf("otlpsink: collector answered gRPC status %s (%s)", name, kind)
	}
	return fmt.Sprintf("otlpsink: collector answered gRPC status %s (%s): %s", name, kind, e.Message)
}

// newGRPCError classifies code as the OTLP specification does, with delay
// from a RetryInfo (negative: none).
func newGRPCError(code uint32, msg string, delay time.Duration) *GRPCError {
	e := &GRPCError{Code: code, Message: msg, RetryDelay: max(delay, 0)}
	switch code {
	case grpcCancelled, grpcDeadlineExceeded, grpcAborted, grpcOutOfRange, grpcUnavailable, grpcDataLoss:
	case grpcResourceExhausted:
		e.Permanent = delay < 0 // retried only when the server says when
	default:
		e.Permanent = true
	}
	return e
}

// noH2 reports whether err is the TLS alert of a server that offers none
// of the client's ALPN protocols (RFC 7301 no_application_protocol), here
// h2. crypto/tls reports a peer's alert as a *net.OpError "remote error"
// around an unexported type: its text is what identifies it.
func noH2(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error" && op.Err != nil &&
		strings.HasSuffix(op.Err.Error(), "no application protocol")
}

// maxGRPCMessage bounds the response message read (grpc-go's default
// receive limit): a larger one is a malformed answer.
const maxGRPCMessage = 4 << 20

// postGRPC makes one Export call with payload (gzipped if the Sink
// compresses), n records. For a retryable failure it returns the delay the
// collector asked for with RetryInfo (0 if none).
func (s *Sink) postGRPC(payload []byte, n int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(s.base, s.cfg.timeout)
	defer cancel()
	var prefix [5]byte
	if s.cfg.gzip {
		prefix[0] = 1 // compressed flag: grpc-encoding names the algorithm
	}
	binary.BigEndian.PutUint32(prefix[1:], uint32(len(payload)))
	body := func() io.ReadCloser {
		return io.NopCloser(io.MultiReader(bytes.NewReader(prefix[:]), bytes.NewReader(payload)))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.url, body())
	if err != nil {
		return 0, &permanentError{err}
	}
	req.ContentLength = int64(len(prefix) + len(payload))
	req.GetBody = func() (io.ReadCloser, error) { return body(), nil } // lets net/http resend on a closing connection
	for k, v := range s.cfg.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	req.Header.Set("Grpc-Timeout", grpcTimeout(s.cfg.timeout))
	req.Header.Set("Grpc-Accept-Encoding", "gzip")
	if s.cfg.gzip {
		req.Header.Set("Grpc-Encoding", "gzip")
	}
	s.requests.Add(1)
	resp, err := s.cfg.client.Do(req)
	if err != nil {
		switch {
		case noH2(err):
			return 0, &permanentError{fmt.Errorf("the collector offers no HTTP/2 over TLS (ALPN h2), which gRPC needs: %w", err)}
		case isTLSConfigError(err):
			return 0, &permanentError{err}
		}
		return 0, err // network error: retryable
	}
	defer resp.Body.Close()
	msg, unreadable, err := readGRPCResponse(resp)
	if err != nil {
		var ge *GRPCError
		if errors.As(err, &ge) && !ge.Permanent {
			return min(ge.RetryDelay, max(retryAfterCap, s.cfg.retryMax)), err
		}
		return 0, err
	}
	if !s.settle(n) { // counted as failed when the Close gave up, before this answer
		return 0, &gaveUpError{err: errors.New("the collector answered after the close deadline"), why: s.stopCause(), attempts: 1}
	}
	s.sent.Add(uint64(n))
	if unreadable != nil {
		s.report(fmt.Errorf("otlpsink: the collector accepted %d records (grpc-status 0), but its answer is unreadable: %w", n, unreadable))
	}
	if rej, text := partialSuccess(msg); rej > 0 {
		s.rejected.Add(rej)
		s.notePartial(rej, text)
	}
	return 0, nil
}

// readGRPCResponse reads a unary call's answer: when the status is OK, its
// response message (nil if none), or what is wrong with a message that
// cannot be read (unreadable); else the status as a *GRPCError, a
// malformed answer as a permanent one, or the network error that cut the
// response short (retryable).
func readGRPCResponse(resp *http.Response) (msg []byte, unreadable, err error) {
	if resp.ProtoMajor != 2 {
		return nil, nil, &permanentError{fmt.Errorf("gRPC needs HTTP/2; the answer came over %s (%s)", resp.Proto, resp.Status)}
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, nil, httpToGRPC(resp.StatusCode, resp.Status, bodyText(body))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/grpc") {
		return nil, nil, newGRPCError(grpcUnknown, fmt.Sprintf("not a gRPC answer: content-type %q", ct), -1)
	}
	if resp.Header.Get("Grpc-Status") != "" { // trailers-only: no message
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil, nil, grpcStatus(resp.Header)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 5+maxGRPCMessage+1))
	if err != nil {
		return nil, nil, err // the stream was cut (reset, connection lost): retryable
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // to EOF, so the trailers are in
	msg, frameErr := grpcMessage(raw, resp.Header.Get("Grpc-Encoding"))
	if resp.Trailer.Get("Grpc-Status") == "" {
		why := "the answer has no grpc-status"
		if frameErr != nil {
			why += "; " + frameErr.Error()
		}
		return nil, nil, newGRPCError(grpcInternal, why, -1)
	}
	if err := grpcStatus(resp.Trailer); err != nil {
		return nil, nil, err
	}
	if frameErr != nil {
		// The collector accepted the records (status OK): they are sent;
		// only its partial success, if any, is unreadable.
		return nil, frameErr, nil
	}
	return msg, nil, nil
}

// grpcMessage returns the one message of a unary response body (nil if
// none), uncompressed; encoding is the response's grpc-encoding.
func grpcMessage(b []byte, encoding string) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b) < 5 {
		return nil, fmt.Errorf("malformed gRPC frame: %d bytes, shorter than its 5-byte prefix", len(b))
	}
	flag, size := b[0], binary.BigEndian.Uint32(b[1:5])
	switch {
	case flag > 1:
		return nil, fmt.Errorf("malformed gRPC frame: flag byte %#x", flag)
	case size > maxGRPCMessage:
		return nil, fmt.Errorf("gRPC response message of %d bytes, over the %d-byte limit", size, maxGRPCMessage)
	case uint64(len(b)-5) < uint64(size):
		return nil, fmt.Errorf("malformed gRPC frame: %d bytes announced, %d received", size, len(b)-5)
	case uint64(len(b)-5) > uint64(size):
		return nil, fmt.Errorf("malformed gRPC response: %d bytes after its message", len(b)-5-int(size))
	}
	msg := b[5:]
	if flag == 0 {
		return msg, nil
	}
	if !strings.EqualFold(encoding, "gzip") {
		return nil, fmt.Errorf("gRPC response message compressed with %q, not gzip", encoding)
	}
	zr, err := gzip.NewReader(bytes.NewReader(msg))
	if err != nil {
		return nil, fmt.Errorf("gRPC response message: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxGRPCMessage+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("gRPC response message: %w", err)
	case len(out) > maxGRPCMessage:
		return nil, fmt.Errorf("gRPC response message over the %d-byte limit uncompressed", maxGRPCMessage)
	}
	return out, nil
}

// grpcStatus reads the call's status from h (trailers, or the headers of
// a trailers-only answer): nil for OK, else a *GRPCError.
func grpcStatus(h http.Header) error {
	v := h.Get("Grpc-Status")
	code, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return newGRPCError(grpcInternal, fmt.Sprintf("malformed grpc-status %q", short([]byte(v))), -1)
	}
	if code == uint64(grpcOK) {
		return nil
	}
	msg := h.Get("Grpc-Message")
	if m, err := url.PathUnescape(msg); err == nil {
		msg = m // percent-encoded, as the gRPC spec says; kept as sent if not
	}
	return newGRPCError(uint32(code), bodyText([]byte(msg)), retryInfoDelay(h.Get("Grpc-Status-Details-Bin")))
}

// httpToGRPC is the status an HTTP error stands for, as gRPC clients map
// it (a proxy's answer): 429, 502, 503 and 504 are UNAVAILABLE.
func httpToGRPC(code int, status, body string) *GRPCError {
	c := grpcUnknown
	switch code {
	case http.StatusBadRequest:
		c = grpcInternal
	case http.StatusUnauthorized:
		c = grpcUnauthenticated
	case http.StatusForbidden:
		c = 7 // PERMISSION_DENIED
	case http.StatusNotFound:
		c = grpcUnimplemented
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		c = grpcUnavailable
	}
	msg := "HTTP " + status
	if body != "" {
		msg += ": " + body
	}
	return newGRPCError(c, msg, -1)
}

// grpcTimeout formats d as a grpc-timeout value: at most 8 digits, in the
// finest unit that fits, rounded up.
func grpcTimeout(d time.Duration) string {
	units := [...]struct {
		d    time.Duration
		name byte
	}{{time.Nanosecond, 'n'}, {time.Microsecond, 'u'}, {time.Millisecond, 'm'}, {time.Second, 'S'}, {time.Minute, 'M'}, {time.Hour, 'H'}}
	for _, u := range units {
		v := d / u.d
		if d%u.d != 0 {
			v++
		}
		if v <= 99999999 {
			return strconv.FormatInt(int64(max(v, 1)), 10) + string(u.name)
		}
	}
	return "99999999H"
}
