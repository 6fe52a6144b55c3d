package journald_test

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/journald"
)

func ExampleNewHandler() {
	// A stand-in for journald's socket, to show what the journal receives;
	// in a program, leave Socket empty (/run/systemd/journal/socket).
	dir, _ := os.MkdirTemp("", "journal")
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "socket")
	journal, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: socket, Net: "unixgram"})
	if err != nil {
		panic(err)
	}
	defer journal.Close()

	h, err := journald.NewHandler(journald.Options{Socket: socket, Identifier: "checkout"}, &asyncbus.Options{})
	if err != nil {
		panic(err) // e.g. "journald: no journal socket at ... (is systemd-journald running?)"
	}
	log := slog.New(h)
	log.Warn("stock low", "sku", "A-1", slog.Group("stock", "left", 2), "http.method", "GET")
	if err := h.Close(); err != nil {
		panic(err)
	}

	entry := make([]byte, 4096)
	n, err := journal.Read(entry)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(entry[:n]))
	fmt.Println("written:", h.Stats().Written)
	// Output:
	// PRIORITY=4
	// MESSAGE=stock low
	// SYSLOG_IDENTIFIER=checkout
	// SKU=A-1
	// STOCK_LEFT=2
	// HTTP_METHOD=GET
	// written: 1
}
