package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// The record shapes a run can log (Config.Shape, the -shape flag).
const (
	// ShapeReference is the ~200-byte access-log line (the default).
	ShapeReference = "reference"
	// ShapeStructs is the ~1 KB record of StructAttrs: a struct, a slice
	// of ten structs, a []string, a []int, a time.Time and an error.
	ShapeStructs = "structs"
)

// Shapes lists every shape, the default first.
func Shapes() []string { return []string{ShapeReference, ShapeStructs} }

// checkShape reports an error for a shape that is not one of Shapes ("" is
// the reference).
func checkShape(shape string) error {
	for _, s := range Shapes() {
		if shape == s || shape == "" {
			return nil
		}
	}
	return fmt.Errorf("unknown record shape %q (have %v)", shape, Shapes())
}

// StructsMessage is the message of the structs record.
const StructsMessage = "order placed"

// User and Item make up the structs record: what a service logs when it
// hands its own types to the logger. User is its "user" attribute.
type User struct {
	ID      int64
	Name    string
	Email   string
	Roles   []string
	Created time.Time
}

// Item is one of the structs record's ten "items".
type Item struct {
	SKU   string
	Qty   int
	Price float64
	Added time.Time
}

// structValues are the structs record's values, built once: every record
// logs the same ones (handlers only read them).
var structValues = func() (v struct {
	user   User
	items  []Item
	tags   []string
	counts []int
	at     time.Time
	err    error
}) {
	t := ReferenceTime
	v.user = User{ID: 1234567, Name: "Ada Lovelace", Email: "ada@example.com", Roles: []string{"admin", "billing"},
		Created: t.Add(-72 * time.Hour)}
	for i := range 10 {
		v.items = append(v.items, Item{SKU: fmt.Sprintf("sku-%04d", 17*i+3), Qty: i%3 + 1, Price: 9.5 + float64(i), Added: t.Add(time.Duration(i) * time.Minute)})
	}
	v.tags = []string{"checkout", "web", "eu-west-1", "priority"}
	v.counts = []int{3, 1, 4, 1, 5, 9, 2, 6}
	v.at = t
	v.err = errors.New("inventory service: context deadline exceeded")
	return v
}()

// StructAttrs returns the structs record's attributes (without seq): user
// (a struct), items (ten structs, each with a time.Time), tags ([]string),
// counts ([]int), at (time.Time) and err (an error). Through
// slog.JSONHandler the line is about 1 KB.
func StructAttrs() [6]slog.Attr {
	v := &structValues
	return [6]slog.Attr{
		slog.Any("user", v.user), slog.Any("items", v.items), slog.Any("tags", v.tags),
		slog.Any("counts", v.counts), slog.Time("at", v.at), slog.Any("err", v.err),
	}
}

// StructPairs returns the same attributes as key-value pairs, for
// slog.Logger.Info(msg, pairs...).
func StructPairs() []any {
	v := &structValues
	return []any{"user", v.user, "items", v.items, "tags", v.tags, "counts", v.counts, "at", v.at, "err", v.err}
}

// LogShape logs the record of shape (Shapes; "" is the reference) with the
// given seq through l, with LogAttrs.
func LogShape(ctx context.Context, l *slog.Logger, shape string, seq int) {
	if shape != ShapeStructs {
		LogReference(ctx, l, seq)
		return
	}
	var a [7]slog.Attr
	s := StructAttrs()
	copy(a[:], s[:])
	a[6] = slog.Int("seq", seq)
	l.LogAttrs(ctx, slog.LevelInfo, StructsMessage, a[:]...)
}

// ProcessCPU is the process's user and system CPU time so far
// (getrusage(2); 0 where it does not exist).
func ProcessCPU() time.Duration { return readUsage().cpu }
