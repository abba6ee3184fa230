package listen

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestServeAnswersUntilStoppedAndRefusesABusyAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	stop, err := Serve(addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Errorf("body = %q", body)
	}
	if _, err := Serve(addr, http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("second Serve on %s = %v, want a refusal naming the address", addr, err)
	}
	stop()
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Error("still answering after stop")
	}
}

func TestAnEmptyAddressServesNothing(t *testing.T) {
	stop, err := Serve("", http.NotFoundHandler())
	if err != nil || stop == nil {
		t.Fatalf("Serve(\"\") = %v", err)
	}
	stop()
}
