// Sending one request until the collector accepts or refuses it: back-off,
// Retry-After, the give-up deadline, and reading the collector's answer.

package otlpsink

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// deliver posts s.body, which holds n records, until it is accepted,
// permanently refused, or the give-up deadline passes.
func (s *Sink) deliver(n int) error {
	payload := s.body
	if s.cfg.gzip {
		s.zbuf.Reset()
		if s.zw == nil {
			s.zw, _ = gzip.NewWriterLevel(&s.zbuf, gzip.BestSpeed)
		} else {
			s.zw.Reset(&s.zbuf)
		}
		_, _ = s.zw.Write(payload) // writes to a bytes.Buffer cannot fail
		_ = s.zw.Close()
		payload = s.zbuf.Bytes()
	}
	var last error // the last answer of the collector, or network error
	for attempt := 0; ; attempt++ {
		var wait time.Duration
		var err error
		if s.cfg.grpc {
			wait, err = s.postGRPC(payload, n)
		} else {
			wait, err = s.post(payload, n)
		}
		if err == nil {
			s.noteRecovered(n)
			return nil
		}
		var gaveUp *gaveUpError
		if isPermanent(err) || errors.As(err, &gaveUp) {
			return err
		}
		if cause := context.Cause(s.base); cause != nil {
			// Retrying stopped during the request, which its end cut:
			// "context canceled" would say nothing of what happened.
			if last == nil {
				last = errors.New("no answer from the collector before the deadline")
			}
			return &gaveUpError{err: last, why: cause, attempts: attempt + 1}
		}
		last = err
		s.noteRetry(err)
		if wait <= 0 {
			wait = s.backoff(attempt)
		}
		if !s.sleep(wait) {
			return &gaveUpError{err: err, why: s.stopCause(), attempts: attempt + 1}
		}
		s.retries.Add(1)
	}
}

// backoff is the jittered exponential delay before retry attempt+1:
// uniformly in [d/2, d] for d = RetryInitial·2^attempt capped at RetryMax.
func (s *Sink) backoff(attempt int) time.Duration {
	d := s.cfg.retryMax
	if attempt < 30 {
		d = min(s.cfg.retryInit<<attempt, s.cfg.retryMax)
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d, or less when the give-up deadline comes first; it reports
// false once the deadline has passed (nothing more should be tried).
func (s *Sink) sleep(d time.Duration) bool {
	until := time.Now().Add(d)
	for {
		now := time.Now()
		if g := s.giveUpAt.Load(); g != 0 {
			if now.UnixNano() >= g || s.base.Err() != nil {
				return false
			}
			if dl := time.Unix(0, g); dl.Before(until) {
				until = dl // woken at the deadline, the check above ends it
			}
		}
		if !now.Before(until) {
			return true
		}
		t := time.NewTimer(until.Sub(now))
		select {
		case <-t.C:
		case <-s.base.Done():
			t.Stop()
			return false
		case <-s.closingWake():
			t.Stop() // Close began: loop to apply its deadline
		}
	}
}

// stopCause says why retrying stopped: the Close's deadline or context, or
// nil for the replay deadline.
func (s *Sink) stopCause() error {
	if cause := context.Cause(s.base); cause != nil {
		return cause
	}
	select {
	case <-s.closing:
		return errCloseDeadline // passed, its timer not run yet
	default:
		return nil
	}
}

// closingWake returns the closing channel while no deadline is set, and
// nil (never ready) once one is, so a closed channel cannot spin the loop.
func (s *Sink) closingWake() <-chan struct{} {
	if s.giveUpAt.Load() != 0 {
		return nil
	}
	return s.closing
}

// post makes one request. For a retryable failure it returns the delay the
// collector asked for with Retry-After (0 if none).
func (s *Sink) post(payload []byte, n int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(s.base, s.cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.url, bytes.NewReader(payload))
	if err != nil {
		return 0, &permanentError{err}
	}
	for k, v := range s.cfg.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if s.cfg.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	s.requests.Add(1)
	resp, err := s.cfg.client.Do(req)
	if err != nil {
		if isTLSConfigError(err) {
			return 0, &permanentError{err}
		}
		return 0, err // network error: retryable
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if !s.settle(n) { // counted as failed when the Close gave up, before this answer
			return 0, &gaveUpError{err: errors.New("the collector answered after the close deadline"), why: s.stopCause(), attempts: 1}
		}
		s.sent.Add(uint64(n))
		if rej, msg := partialSuccess(body); rej > 0 {
			s.rejected.Add(rej)
			s.notePartial(rej, msg)
		}
		return 0, nil
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusBadGateway,
		resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		return retryAfter(resp.Header.Get("Retry-After"), max(retryAfterCap, s.cfg.retryMax)),
			&StatusError{Code: resp.StatusCode, Status: resp.Status, Body: bodyText(body)}
	}
	return 0, &StatusError{Code: resp.StatusCode, Status: resp.Status, Body: bodyText(body), Permanent: true}
}

func short(b []byte) string {
	if len(b) > 256 {
		b = b[:256]
	}
	return string(b)
}

// bodyText is the start of a response body for an error message: trimmed
// of surrounding white space, valid UTF-8.
func bodyText(b []byte) string {
	return strings.ToValidUTF8(strings.TrimSpace(short(b)), "\uFFFD")
}

// retryAfterCap bounds the wait a Retry-After header asks for (at least
// RetryMax): the OTel Go SDK gives up on a batch rather than wait past its
// MaxElapsedTime (1 minute by default); this Sink never gives up, so it
// waits at most that long and asks again.
const retryAfterCap = time.Minute

// retryAfter parses a Retry-After value, seconds or an HTTP date, as a
// wait of at most limit (0 if absent, unparsable or in the past).
func retryAfter(v string, limit time.Duration) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if secs > uint64(limit/time.Second) { // also ErrRange's max value: no overflow below
			return limit
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(time.Until(t), 0), limit)
	}
	return 0
}

// partialSuccess reads ExportLogsServiceResponse.partial_success from a
// protobuf response body: rejected_log_records (0 if absent) and
// error_message ("" if absent; cut to 256 bytes and made valid UTF-8). What
// was read before a malformed part is kept, and each field's last value
// wins, as a protobuf decoder merges repeated fields.
func partialSuccess(b []byte) (rejected uint64, msg string) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return rejected, msg
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			ps, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return rejected, msg
			}
		fields:
			for len(ps) > 0 {
				pnum, ptyp, m := protowire.ConsumeTag(ps)
				if m < 0 {
					break
				}
				ps = ps[m:]
				switch {
				case pnum == 1 && ptyp == protowire.VarintType:
					v, k := protowire.ConsumeVarint(ps)
					if k < 0 {
						break fields
					}
					rejected = v // proto3 scalar: the last value wins, also across merged partial_success fields
					ps = ps[k:]
					continue
				case pnum == 2 && ptyp == protowire.BytesType:
					v, k := protowire.ConsumeBytes(ps)
					if k < 0 {
						break fields
					}
					msg = strings.ToValidUTF8(short(v), "\uFFFD")
					ps = ps[k:]
					continue
				}
				k := protowire.ConsumeFieldValue(pnum, ptyp, ps)
				if k < 0 {
					break
				}
				ps = ps[k:]
			}
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return rejected, msg
		}
		b = b[n:]
	}
	return rejected, msg
}
