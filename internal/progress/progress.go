// Package progress prints a one-line status of long work on a terminal's
// stderr: nothing for work that ends within a few seconds, nothing at all
// when stderr is not a terminal (a pipe, a file, a test), so that scripts
// and logs never see carriage returns.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// Delay is how long work runs before its status is shown.
const Delay = 2 * time.Second

// interval is how often the line is rewritten.
const interval = 250 * time.Millisecond

// Line is a status line being kept up to date.
type Line struct {
	w       io.Writer
	status  func() string
	stopped chan struct{}
	done    sync.WaitGroup
	mu      sync.Mutex
	shown   bool
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// Start shows status() on w, rewritten in place, once delay has passed,
// if w is a terminal. Stop ends it.
func Start(w io.Writer, delay time.Duration, status func() string) *Line {
	return start(w, delay, status, IsTerminal(w))
}

func start(w io.Writer, delay time.Duration, status func() string, tty bool) *Line {
	l := &Line{w: w, status: status, stopped: make(chan struct{})}
	if !tty {
		return l
	}
	l.done.Add(1)
	go l.run(delay)
	return l
}

func (l *Line) run(delay time.Duration) {
	defer l.done.Done()
	select {
	case <-time.After(delay):
	case <-l.stopped:
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		l.mu.Lock()
		// \r and erase-to-end-of-line: the line is rewritten in place.
		fmt.Fprintf(l.w, "\r%s\x1b[K", l.status())
		l.shown = true
		l.mu.Unlock()
		select {
		case <-t.C:
		case <-l.stopped:
			return
		}
	}
}

// Stop ends the line. If it was shown, final replaces it (on a line of its
// own), or it is erased when final is "".
func (l *Line) Stop(final string) {
	select {
	case <-l.stopped:
		return
	default:
	}
	close(l.stopped)
	l.done.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.shown {
		return
	}
	if final == "" {
		fmt.Fprint(l.w, "\r\x1b[K")
		return
	}
	fmt.Fprintf(l.w, "\r%s\x1b[K\n", final)
}
