package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the line's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestNotATerminal: a buffer (a pipe, a file) never gets a status line,
// however long the work takes.
func TestNotATerminal(t *testing.T) {
	var b syncBuffer
	l := Start(&b, 0, func() string { return "working" })
	time.Sleep(3 * interval)
	l.Stop("done")
	if b.String() != "" {
		t.Errorf("wrote %q to a non-terminal", b.String())
	}
}

// TestTerminal: on a terminal the status is rewritten in place after the
// delay, and the final line replaces it; work shorter than the delay
// prints nothing.
func TestTerminal(t *testing.T) {
	var b syncBuffer
	n := 0
	l := start(&b, 10*time.Millisecond, func() string { n++; return "scanned " + strings.Repeat("#", n) }, true)
	time.Sleep(10*time.Millisecond + 3*interval)
	l.Stop("ranked 3 partitions")
	got := b.String()
	if !strings.HasPrefix(got, "\rscanned #\x1b[K\rscanned ##\x1b[K") || !strings.HasSuffix(got, "\rranked 3 partitions\x1b[K\n") {
		t.Errorf("wrote %q", got)
	}
	var q syncBuffer
	l = start(&q, time.Hour, func() string { return "x" }, true)
	l.Stop("final")
	if q.String() != "" {
		t.Errorf("quick work wrote %q", q.String())
	}
}
