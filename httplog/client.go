package httplog

import (
	"net"
	"net/http"
	"strings"
)

// clientAddress returns the client's address of r: the host of
// RemoteAddr with proxies 0, else the proxies-th address from the right
// of the Forwarded header or, without one, of X-Forwarded-For (the
// left-most when there are fewer).
func clientAddress(r *http.Request, proxies int) string {
	if proxies > 0 {
		if fwd := r.Header.Values("Forwarded"); len(fwd) > 0 {
			if _, a := nthFromRight(fwd, proxies, forwardedFor); a != "" {
				return hostOnly(a)
			}
		} else if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			if _, a := nthFromRight(xff, proxies, strings.TrimSpace); a != "" {
				return hostOnly(a)
			}
		}
	}
	return hostOnly(r.RemoteAddr)
}

// scheme returns the URL scheme of the client's request: with proxies 0
// the one r was received with ("https" over TLS, else "http"); else the
// proto= of the Forwarded element the client address is taken from or,
// without a Forwarded header, the proxies-th value from the right of
// X-Forwarded-Proto, when it is http or https (anything else is not a
// scheme this server is reached by: the received one is kept).
func scheme(r *http.Request, proxies int) string {
	if proxies > 0 {
		var p string
		if fwd := r.Header.Values("Forwarded"); len(fwd) > 0 {
			elem, _ := nthFromRight(fwd, proxies, forwardedFor)
			p = forwardedParam(elem, "proto")
		} else if xfp := r.Header.Values("X-Forwarded-Proto"); len(xfp) > 0 {
			_, p = nthFromRight(xfp, proxies, strings.TrimSpace)
		}
		switch {
		case strings.EqualFold(p, "https"):
			return "https"
		case strings.EqualFold(p, "http"):
			return "http"
		}
	}
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// nthFromRight returns the n-th element from the right of the
// comma-separated lists in values from which parse reads a value, and
// that value; with fewer such elements, the left-most; "" without any.
func nthFromRight(values []string, n int, parse func(string) string) (elem, value string) {
	for i := len(values) - 1; i >= 0; i-- {
		v := values[i]
		for v != "" {
			var e string
			if j := strings.LastIndexByte(v, ','); j >= 0 {
				e, v = v[j+1:], v[:j]
			} else {
				e, v = v, ""
			}
			a := parse(e)
			if a == "" {
				continue
			}
			elem, value = e, a
			if n--; n == 0 {
				return elem, value
			}
		}
	}
	return elem, value
}

// forwardedFor returns the for= parameter of one Forwarded element
// (RFC 7239), unquoted; "" without one.
func forwardedFor(elem string) string { return forwardedParam(elem, "for") }

// forwardedParam returns the parameter key of one Forwarded element
// (RFC 7239; keys are case-insensitive), unquoted; "" without one.
func forwardedParam(elem, key string) string {
	for _, pair := range strings.Split(elem, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(k, key) {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// hostOnly returns addr without its port and IPv6 brackets.
func hostOnly(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
}
