package openlist

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

type named string

func (named) CloseContext(context.Context) error { return nil }

// TestNewestFirst: the list gives what is open, the most recently added
// first; a removed entry is gone, and removing it again changes nothing.
func TestNewestFirst(t *testing.T) {
	a, b, c := Add(named("a")), Add(named("b")), Add(named("c"))
	assert.Equal(t, []Closer{named("c"), named("b"), named("a")}, NewestFirst())
	b.Remove()
	b.Remove()
	assert.Equal(t, []Closer{named("c"), named("a")}, NewestFirst())
	a.Remove()
	c.Remove()
	assert.Empty(t, NewestFirst())
}
