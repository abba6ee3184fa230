// Package listen serves an operational handler (health, readiness, metrics) on its own
// address beside a long-running command's main work, and stops it with the command.
package listen

import (
	"fmt"
	"net"
	"net/http"
	"time"
)

// Serve listens on addr ("" disables it) and serves h until the returned stop is called.
// The listener is bound before Serve returns, so a busy port fails the command at start.
func Serve(addr string, h http.Handler) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}
