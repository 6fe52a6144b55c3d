package otlpsink

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// grpcReceiver is an in-process OTLP/gRPC logs endpoint written on
// net/http: HTTP/2 without TLS (h2c, prior knowledge), or with TLS and
// ALPN (newGRPCReceiverTLS). answer, if set, replies to each call (by its
// index, from 0) once its request is decoded and returns whether the call
// was accepted; an accepted call it did not reply to, or any call without
// an answer, gets an empty response message and status OK.
type grpcReceiver struct {
	t   testing.TB
	srv *httptest.Server

	mu      sync.Mutex
	bodies  [][]byte   // the request messages of accepted calls, uncompressed
	calls   []grpcCall // every call, accepted or not
	answer  func(i int, w http.ResponseWriter) (accepted bool)
	invalid []string // requests that were not a well-formed Export call
}

func newGRPCReceiver(t testing.TB) *grpcReceiver {
	t.Helper()
	rc := &grpcReceiver{t: t}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.Config.Protocols = new(http.Protocols)
	rc.srv.Config.Protocols.SetUnencryptedHTTP2(true) // h2c only: an HTTP/1 request is refused
	rc.srv.Start()
	t.Cleanup(rc.srv.Close)
	return rc
}

func newGRPCReceiverTLS(t testing.TB) *grpcReceiver {
	t.Helper()
	rc := &grpcReceiver{t: t}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.EnableHTTP2 = true
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *grpcReceiver) serve(w http.ResponseWriter, r *http.Request) {
	msg, err := readExportCall(r)
	rc.mu.Lock()
	i := len(rc.calls)
	call := grpcCall{Header: r.Header.Clone(), Proto: r.Proto, RemoteAddr: r.RemoteAddr}
	if r.TLS != nil {
		call.ALPN = r.TLS.NegotiatedProtocol
	}
	rc.calls = append(rc.calls, call)
	if err != nil {
		rc.invalid = append(rc.invalid, err.Error())
	}
	answer := rc.answer
	rc.mu.Unlock()
	if err != nil {
		grpcTrailersOnly(w, 13, err.Error(), nil) // INTERNAL, as grpc-go answers a malformed request
		return
	}
	ww := &replyWriter{ResponseWriter: w}
	if answer != nil && !answer(i, ww) {
		return
	}
	rc.mu.Lock()
	rc.bodies = append(rc.bodies, msg) // decoded on the test goroutine (require must not run here)
	rc.mu.Unlock()
	if !ww.replied {
		grpcReply(w, 0, "", nil)
	}
}

// replyWriter notes whether an answer wrote its own reply.
type replyWriter struct {
	http.ResponseWriter
	replied bool
}

func (w *replyWriter) WriteHeader(code int) {
	w.replied = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *replyWriter) Write(p []byte) (int, error) {
	w.replied = true
	return w.ResponseWriter.Write(p)
}

// readExportCall checks that r is a gRPC call of LogsService/Export over
// HTTP/2 and returns its one request message, uncompressed.
func readExportCall(r *http.Request) ([]byte, error) {
	switch {
	case r.ProtoMajor != 2:
		return nil, fmt.Errorf("not HTTP/2: %s", r.Proto)
	case r.Method != http.MethodPost || r.URL.Path != grpcExportPath:
		return nil, fmt.Errorf("not Export: %s %s", r.Method, r.URL.Path)
	case r.Header.Get("Content-Type") != "application/grpc" || r.Header.Get("Te") != "trailers":
		return nil, fmt.Errorf("content-type %q, te %q", r.Header.Get("Content-Type"), r.Header.Get("Te"))
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if len(b) < 5 || int(binary.BigEndian.Uint32(b[1:5])) != len(b)-5 {
		return nil, fmt.Errorf("not one length-prefixed message: %d bytes", len(b))
	}
	if b[0] == 0 {
		return b[5:], nil
	}
	if r.Header.Get("Grpc-Encoding") != "gzip" {
		return nil, fmt.Errorf("compressed message, grpc-encoding %q", r.Header.Get("Grpc-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(b[5:]))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// grpcFrame is msg with its 5-byte prefix, gzipped if compress.
func grpcFrame(msg []byte, compress bool) []byte {
	flag := byte(0)
	if compress {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		_, _ = zw.Write(msg)
		_ = zw.Close()
		msg, flag = z.Bytes(), 1
	}
	out := []byte{flag, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(len(msg)))
	return append(out, msg...)
}

// grpcReply answers with an empty response message and status code in
// the trailers, with grpc-message text and the grpc-status-details-bin
// details (base64 of a google.rpc.Status).
func grpcReply(w http.ResponseWriter, code int, text string, details []byte) {
	grpcReplyRaw(w, grpcFrame(nil, false), "", code, text, details)
}

// grpcReplyRaw answers with body as it is (frames, or not), grpc-encoding
// encoding if not empty, and the status in the trailers.
func grpcReplyRaw(w http.ResponseWriter, body []byte, encoding string, code int, text string, details []byte) {
	w.Header().Set("Content-Type", "application/grpc")
	if encoding != "" {
		w.Header().Set("Grpc-Encoding", encoding)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	setStatus(w.Header(), http.TrailerPrefix, code, text, details)
}

// grpcTrailersOnly answers with the status in the headers and no body, as
// servers do for an error (a trailers-only response).
func grpcTrailersOnly(w http.ResponseWriter, code int, text string, details []byte) {
	w.Header().Set("Content-Type", "application/grpc")
	setStatus(w.Header(), "", code, text, details)
	w.WriteHeader(http.StatusOK)
}

// setStatus sets the status headers (trailers with prefix
// http.TrailerPrefix); a negative code sets no grpc-status.
func setStatus(h http.Header, prefix string, code int, text string, details []byte) {
	if code >= 0 {
		h.Set(prefix+"Grpc-Status", strconv.Itoa(code))
	}
	if text != "" {
		h.Set(prefix+"Grpc-Message", percentEncode(text))
	}
	if len(details) > 0 {
		h.Set(prefix+"Grpc-Status-Details-Bin", base64.RawStdEncoding.EncodeToString(details))
	}
}

// percentEncode encodes text as grpc-message values are: bytes outside
// printable ASCII, and '%', as %XX.
func percentEncode(text string) string {
	var b []byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c < ' ' || c > '~' || c == '%' {
			b = fmt.Appendf(b, "%%%02X", c)
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

// rpcStatus is a google.rpc.Status with code, message and, if delay is
// not negative, a RetryInfo detail of delay nanoseconds.
func rpcStatus(code int, msg string, delaySecs, delayNanos int64) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(code))
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendString(b, msg)
	if delaySecs < 0 {
		return b
	}
	var dur []byte
	dur = protowire.AppendTag(dur, 1, protowire.VarintType)
	dur = protowire.AppendVarint(dur, uint64(delaySecs))
	dur = protowire.AppendTag(dur, 2, protowire.VarintType)
	dur = protowire.AppendVarint(dur, uint64(delayNanos))
	ri := protowire.AppendTag(nil, 1, protowire.BytesType)
	ri = protowire.AppendBytes(ri, dur)
	var anyMsg []byte
	anyMsg = protowire.AppendTag(anyMsg, 1, protowire.BytesType)
	anyMsg = protowire.AppendString(anyMsg, "type.googleapis.com/google.rpc.RetryInfo")
	anyMsg = protowire.AppendTag(anyMsg, 2, protowire.BytesType)
	anyMsg = protowire.AppendBytes(anyMsg, ri)
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	return protowire.AppendBytes(b, anyMsg)
}

func (rc *grpcReceiver) setAnswer(f func(i int, w http.ResponseWriter) bool) {
	rc.mu.Lock()
	rc.answer = f
	rc.mu.Unlock()
}

// records decodes the accepted requests' records (on the calling goroutine).
func (rc *grpcReceiver) records() []pbRecord {
	rc.mu.Lock()
	bodies := append([][]byte(nil), rc.bodies...)
	rc.mu.Unlock()
	var out []pbRecord
	for _, b := range bodies {
		out = append(out, decodeRequest(rc.t, b).Records...)
	}
	return out
}

// grpcCall is what the receiver saw of one call.
type grpcCall struct {
	Header http.Header
	Proto  string // "HTTP/2.0"
	ALPN   string // the protocol TLS negotiated ("" without TLS)
	// RemoteAddr is the client's address: the same for calls on one
	// connection.
	RemoteAddr string
}

// requests returns every call and the faults of the malformed ones.
func (rc *grpcReceiver) requests() (calls []grpcCall, invalid []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]grpcCall(nil), rc.calls...), append([]string(nil), rc.invalid...)
}

// grpcOptions points at rc over gRPC with fast retries and no environment
// influence.
func grpcOptions(rc *grpcReceiver) Options {
	o := testOptions(&receiver{srv: rc.srv})
	o.Protocol = ProtocolGRPC
	return o
}
