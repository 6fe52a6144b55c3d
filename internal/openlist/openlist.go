// Package openlist is the process's list of open handlers, in the order
// they were opened, which the shutdown package closes at once.
package openlist

import (
	"container/list"
	"context"
	"sync"
)

// Closer is an open handler: what the shutdown package calls to flush and
// close it.
type Closer interface {
	CloseContext(ctx context.Context) error
}

var (
	mu   sync.Mutex // guards open; taken at open, at close and by Snapshot, never per record
	open = list.New()
)

// Entry is one handler's place in the list.
type Entry struct {
	once sync.Once
	elem *list.Element
}

// Add lists c as the newest open handler. Remove the returned entry when c
// closes.
func Add(c Closer) *Entry {
	mu.Lock()
	defer mu.Unlock()
	return &Entry{elem: open.PushBack(c)}
}

// Remove takes the entry off the list; later calls do nothing.
func (e *Entry) Remove() {
	e.once.Do(func() {
		mu.Lock()
		defer mu.Unlock()
		open.Remove(e.elem)
	})
}

// NewestFirst returns the handlers open now, the most recently opened
// first.
func NewestFirst() []Closer {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Closer, 0, open.Len())
	for e := open.Back(); e != nil; e = e.Prev() {
		out = append(out, e.Value.(Closer))
	}
	return out
}
