package otlpsink

import (
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/asyncbus/asyncbus/internal/syncbuf"
)

// A tiny OTLP decoder for tests: it reads exactly the fields this package
// writes and fails on anything malformed.

type pbValue struct {
	Kind  string // "string", "bool", "int", "double", "bytes", "array", "kvlist", "empty"
	Str   string
	Bool  bool
	Int   int64
	Dbl   float64
	Bytes []byte
	Arr   []pbValue
	KV    []pbKV
}

type pbKV struct {
	Key   string
	Value pbValue
}

type pbRecord struct {
	Time, Observed uint64
	Severity       int
	SeverityText   string
	Body           pbValue
	Attrs          []pbKV
	Flags          uint32
	TraceID        []byte
	SpanID         []byte
}

type pbRequest struct {
	Resource     []pbKV
	ScopeName    string
	ScopeVersion string
	Records      []pbRecord
}

// fields walks the fields of one message, calling f with each.
func fields(t testing.TB, b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, u uint64)) {
	t.Helper()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		require.GreaterOrEqual(t, n, 0, "bad tag")
		b = b[n:]
		switch typ {
		case protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			require.GreaterOrEqual(t, m, 0, "bad bytes field %d", num)
			f(num, typ, v, 0)
			b = b[m:]
		case protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			require.GreaterOrEqual(t, m, 0, "bad varint field %d", num)
			f(num, typ, nil, v)
			b = b[m:]
		case protowire.Fixed64Type:
			v, m := protowire.ConsumeFixed64(b)
			require.GreaterOrEqual(t, m, 0)
			f(num, typ, nil, v)
			b = b[m:]
		case protowire.Fixed32Type:
			v, m := protowire.ConsumeFixed32(b)
			require.GreaterOrEqual(t, m, 0)
			f(num, typ, nil, uint64(v))
			b = b[m:]
		default:
			t.Fatalf("unexpected wire type %d for field %d", typ, num)
		}
	}
}

func decodeValue(t testing.TB, b []byte) pbValue {
	v := pbValue{Kind: "empty"}
	fields(t, b, func(num protowire.Number, _ protowire.Type, p []byte, u uint64) {
		switch num {
		case fAVString:
			v = pbValue{Kind: "string", Str: string(p)}
		case fAVBool:
			v = pbValue{Kind: "bool", Bool: u != 0}
		case fAVInt:
			v = pbValue{Kind: "int", Int: int64(u)}
		case fAVDouble:
			v = pbValue{Kind: "double", Dbl: math.Float64frombits(u)}
		case fAVBytes:
			v = pbValue{Kind: "bytes", Bytes: append([]byte{}, p...)}
		case fAVArray:
			v = pbValue{Kind: "array", Arr: []pbValue{}}
			fields(t, p, func(_ protowire.Number, _ protowire.Type, e []byte, _ uint64) {
				v.Arr = append(v.Arr, decodeValue(t, e))
			})
		case fAVKVList:
			v = pbValue{Kind: "kvlist", KV: []pbKV{}}
			fields(t, p, func(_ protowire.Number, _ protowire.Type, e []byte, _ uint64) {
				v.KV = append(v.KV, decodeKV(t, e))
			})
		default:
			t.Fatalf("AnyValue field %d", num)
		}
	})
	return v
}

func decodeKV(t testing.TB, b []byte) pbKV {
	var kv pbKV
	fields(t, b, func(num protowire.Number, _ protowire.Type, p []byte, _ uint64) {
		switch num {
		case fKVKey:
			kv.Key = string(p)
		case fKVValue:
			kv.Value = decodeValue(t, p)
		}
	})
	return kv
}

func decodeRecord(t testing.TB, b []byte) pbRecord {
	var r pbRecord
	fields(t, b, func(num protowire.Number, _ protowire.Type, p []byte, u uint64) {
		switch num {
		case fLRTime:
			r.Time = u
		case fLRObserved:
			r.Observed = u
		case fLRSeverity:
			r.Severity = int(u)
		case fLRSeverityText:
			r.SeverityText = string(p)
		case fLRBody:
			r.Body = decodeValue(t, p)
		case fLRAttributes:
			r.Attrs = append(r.Attrs, decodeKV(t, p))
		case fLRFlags:
			r.Flags = uint32(u)
		case fLRTraceID:
			r.TraceID = append([]byte{}, p...)
		case fLRSpanID:
			r.SpanID = append([]byte{}, p...)
		default:
			t.Fatalf("LogRecord field %d", num)
		}
	})
	return r
}

// decodeRequest decodes an ExportLogsServiceRequest with one ResourceLogs
// and one ScopeLogs, as the sink sends.
func decodeRequest(t testing.TB, b []byte) pbRequest {
	var req pbRequest
	n := 0
	fields(t, b, func(num protowire.Number, _ protowire.Type, rl []byte, _ uint64) {
		require.EqualValues(t, fReqResourceLogs, num)
		n++
		fields(t, rl, func(num protowire.Number, _ protowire.Type, p []byte, _ uint64) {
			switch num {
			case fRLResource:
				fields(t, p, func(_ protowire.Number, _ protowire.Type, kv []byte, _ uint64) {
					req.Resource = append(req.Resource, decodeKV(t, kv))
				})
			case fRLScopeLogs:
				fields(t, p, func(num protowire.Number, _ protowire.Type, q []byte, _ uint64) {
					switch num {
					case fSLScope:
						fields(t, q, func(num protowire.Number, _ protowire.Type, s []byte, _ uint64) {
							switch num {
							case fScopeName:
								req.ScopeName = string(s)
							case fScopeVersion:
								req.ScopeVersion = string(s)
							}
						})
					case fSLLogRecords:
						req.Records = append(req.Records, decodeRecord(t, q))
					default:
						t.Fatalf("ScopeLogs field %d", num)
					}
				})
			default:
				t.Fatalf("ResourceLogs field %d", num)
			}
		})
	})
	require.Equal(t, 1, n, "one ResourceLogs per request")
	return req
}

// receiver is an httptest OTLP/HTTP logs endpoint. answer, if set, decides
// the reply to each request (by its index, from 0) before it is decoded;
// a nil answer or a 2xx status accepts it.
type receiver struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	calls    int
	last     []byte // the body of the latest request, accepted or not
	answer   func(i int, w http.ResponseWriter) (accepted bool)
	received chan struct{}  // one token per accepted request
	tlsLog   syncbuf.Buffer // newTLSReceiver: the server's log of failed handshakes
}

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{t: t, received: make(chan struct{}, 1<<16)}
	t.Helper()
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/logs" || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, fmt.Sprintf("bad request %s %s %q", r.Method, r.URL.Path, r.Header.Get("Content-Type")), http.StatusNotFound)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	i := rc.calls
	rc.calls++
	rc.last = b
	answer := rc.answer
	rc.mu.Unlock()
	if answer != nil && !answer(i, w) {
		return
	}
	rc.mu.Lock()
	rc.bodies = append(rc.bodies, b) // decoded on the test goroutine (require must not run here)
	rc.headers = append(rc.headers, r.Header.Clone())
	rc.mu.Unlock()
	if answer == nil {
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}
	rc.received <- struct{}{}
}

func (rc *receiver) records() []pbRecord {
	var out []pbRecord
	for _, r := range rc.requests() {
		out = append(out, r.Records...)
	}
	return out
}

// requests decodes the accepted requests (on the calling goroutine).
func (rc *receiver) requests() []pbRequest {
	rc.mu.Lock()
	bodies := append([][]byte(nil), rc.bodies...)
	rc.mu.Unlock()
	out := make([]pbRequest, len(bodies))
	for i, b := range bodies {
		out[i] = decodeRequest(rc.t, b)
	}
	return out
}

// setAnswer sets the reply policy (under the lock: the server reads it).
func (rc *receiver) setAnswer(f func(i int, w http.ResponseWriter) bool) {
	rc.mu.Lock()
	rc.answer = f
	rc.mu.Unlock()
}

// answerDown is a reply policy for a collector that is down: every
// request gets code ("down") and nothing is received.
func answerDown(code int) func(int, http.ResponseWriter) bool {
	return func(_ int, w http.ResponseWriter) bool {
		http.Error(w, "down", code)
		return false
	}
}

// lastRequest decodes the latest request's body, accepted or not.
func (rc *receiver) lastRequest() pbRequest {
	rc.mu.Lock()
	b := rc.last
	rc.mu.Unlock()
	return decodeRequest(rc.t, b)
}

func (rc *receiver) callCount() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.calls
}
