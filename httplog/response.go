package httplog

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
)

// responseWriter is the http.ResponseWriter the handler is given: it
// records the final status and the bytes written, and passes everything
// on to w.
type responseWriter struct {
	w           http.ResponseWriter
	status      int   // the final (non-1xx) status written; 0: none yet
	bytes       int64 // body bytes written
	wroteHeader bool
	hijacked    bool
	body        *capture // the first bytes written, with Options.BodyLimit
}

var (
	_ http.Flusher    = (*responseWriter)(nil)
	_ http.Hijacker   = (*responseWriter)(nil)
	_ io.ReaderFrom   = (*responseWriter)(nil)
	_ io.StringWriter = (*responseWriter)(nil)
)

// Header returns the header map of the underlying writer.
func (rw *responseWriter) Header() http.Header { return rw.w.Header() }

// WriteHeader passes code on and records it unless it is informational
// (1xx other than 101 Switching Protocols, which net/http sends at once
// and which leave the final status to come). A code net/http refuses
// (below 100 or above 999) panics as net/http does, before anything is
// recorded or passed on: the header is still unwritten, so the recovered
// panic can be answered 500.
func (rw *responseWriter) WriteHeader(code int) {
	if !rw.wroteHeader && !rw.hijacked { // net/http checks only then too
		checkWriteHeaderCode(code)
	}
	if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		rw.w.WriteHeader(code)
		return
	}
	if !rw.wroteHeader {
		rw.wroteHeader = true
		rw.status = code
	}
	rw.w.WriteHeader(code)
}

// Write writes p to the body, sending a 200 header first if none was.
func (rw *responseWriter) Write(p []byte) (int, error) {
	if !rw.wroteHeader {
		rw.wroteHeader = true
		rw.status = http.StatusOK
	}
	n, err := rw.w.Write(p)
	rw.bytes += int64(n)
	if rw.body != nil {
		rw.body.add(p[:n])
	}
	return n, err
}

// WriteString writes s to the body as Write does, through the underlying
// writer's WriteString when it has one (net/http's does), so that
// io.WriteString copies s into no new byte slice.
func (rw *responseWriter) WriteString(s string) (int, error) {
	if !rw.wroteHeader {
		rw.wroteHeader = true
		rw.status = http.StatusOK
	}
	n, err := io.WriteString(rw.w, s)
	rw.bytes += int64(n)
	if rw.body != nil {
		rw.body.addString(s[:n])
	}
	return n, err
}

// checkWriteHeaderCode panics for a status code net/http's response
// writers refuse, with their message (net/http's checkWriteHeaderCode:
// the code must have three digits, RFC 9110 section 15).
func checkWriteHeaderCode(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
}

// ReadFrom copies r to the body through the underlying writer's ReadFrom
// when it has one (sendfile on a TCP connection), else through Write.
func (rw *responseWriter) ReadFrom(r io.Reader) (int64, error) {
	if !rw.wroteHeader {
		rw.wroteHeader = true
		rw.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := rw.w.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(writerOnly{rw.w}, r)
	}
	rw.bytes += n
	return n, err
}

// writerOnly hides every method but Write, so that io.Copy does not call
// ReadFrom back.
type writerOnly struct{ io.Writer }

// Flush flushes the underlying writer (http.ResponseController's Flush:
// it finds a Flusher through Unwrap chains); a writer that cannot flush
// is left as it is, as http.Flusher has no error to report.
func (rw *responseWriter) Flush() {
	if !rw.wroteHeader {
		rw.wroteHeader = true
		rw.status = http.StatusOK
	}
	_ = http.NewResponseController(rw.w).Flush()
}

// FlushError is Flush returning the underlying writer's error, which
// http.ResponseController calls.
func (rw *responseWriter) FlushError() error {
	if !rw.wroteHeader {
		rw.wroteHeader = true
		rw.status = http.StatusOK
	}
	return http.NewResponseController(rw.w).Flush()
}

// Hijack takes over the connection from the underlying writer; it
// returns http.ErrNotSupported where the server has none (HTTP/2).
func (rw *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(rw.w).Hijack()
	if err == nil {
		rw.hijacked = true
	}
	return c, brw, err
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (rw *responseWriter) Unwrap() http.ResponseWriter { return rw.w }
