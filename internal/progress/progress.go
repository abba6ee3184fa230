// Package progress shows a long command's steps on a terminal: the step running now on a
// line redrawn in place, and each finished step with what it found, under the time since the
// start. It is for people watching; logs and pipes get nothing (see ForTerminal).
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/term"
)

// clearLine returns the cursor to the start of the line and erases it (ANSI, as every
// terminal emulator in use understands).
const clearLine = "\r\x1b[K"

// Reporter writes progress to a terminal. A nil *Reporter is silent, so callers need no
// checks; its methods are safe for concurrent use.
type Reporter struct {
	mu      sync.Mutex
	w       io.Writer
	now     func() time.Time
	start   time.Time
	running string // the step on the live line; "" when none is shown
	stop    chan struct{}
	stopped sync.WaitGroup
}

// Option configures a Reporter.
type Option func(*Reporter)

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(r *Reporter) { r.now = now } }

// WithRefresh redraws the running step's line every d, so its elapsed time moves while a
// slow step runs; 0 (the default of New) redraws only when a step starts or ends.
func WithRefresh(d time.Duration) Option {
	return func(r *Reporter) {
		if d > 0 {
			r.stop = make(chan struct{})
			r.stopped.Add(1)
			go r.refresh(d)
		}
	}
}

// ForTerminal returns a Reporter writing to w when w is a terminal and quiet is false, with
// the live line redrawn every second; otherwise nil, which reports nothing.
func ForTerminal(w io.Writer, quiet bool) *Reporter {
	f, ok := w.(interface{ Fd() uintptr })
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return New(w, WithRefresh(time.Second))
}

// New returns a Reporter that writes to w as to a terminal, whatever w is. Close it.
func New(w io.Writer, opts ...Option) *Reporter {
	r := &Reporter{w: w, now: time.Now}
	for _, o := range opts {
		o(r)
	}
	r.start = r.now()
	return r
}

// Start shows step as running, replacing the step shown before if it never ended.
func (r *Reporter) Start(step string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running = step
	r.draw()
}

// Done ends the running step: its line stays, with what it found.
func (r *Reporter) Done(found string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == "" {
		return
	}
	fmt.Fprintf(r.w, "%s%7s  %s: %s\n", clearLine, r.elapsed(), r.running, found)
	r.running = ""
}

// Close stops the redraws and erases a line left running, so what the command prints next
// starts on a clean line. Close before writing anything else to the terminal.
func (r *Reporter) Close() {
	if r == nil {
		return
	}
	if r.stop != nil {
		close(r.stop)
		r.stopped.Wait()
		r.stop = nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running != "" {
		fmt.Fprint(r.w, clearLine)
		r.running = ""
	}
}

func (r *Reporter) refresh(every time.Duration) {
	defer r.stopped.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			r.draw()
			r.mu.Unlock()
		}
	}
}

// draw writes the live line; the caller holds mu.
func (r *Reporter) draw() {
	if r.running != "" {
		fmt.Fprintf(r.w, "%s%7s  %s …", clearLine, r.elapsed(), r.running)
	}
}

// elapsed is the time since the start: "4.2s" under a minute, then "2m05s".
func (r *Reporter) elapsed() string {
	d := r.now().Sub(r.start)
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
