package httplog

import "io"

// capture keeps a copy of the first limit bytes that pass through it.
type capture struct {
	buf   []byte
	limit int
}

// add copies what of p still fits under the limit.
func (c *capture) add(p []byte) {
	if room := c.limit - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
}

// addString is add for a string.
func (c *capture) addString(s string) {
	if room := c.limit - len(c.buf); room > 0 {
		c.buf = append(c.buf, s[:min(room, len(s))]...)
	}
}

// bodyReader is a request body that keeps a copy of the first bytes the
// handler reads from it.
type bodyReader struct {
	io.ReadCloser
	capture
}

// Read reads from the request body and keeps what fits.
func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.add(p[:n])
	return n, err
}
