package testfixture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Serving is a server's command running in the test's process, on a
// loopback port: the tests of server, internal/cli and e2e each start the
// server their own way (New and Run, or the command's flags) and share
// the rest.
type Serving struct {
	Addr   string // where it listens
	done   chan int
	cancel context.CancelFunc
}

// StartServing runs main, a server's command, and waits until it calls
// ready with the address it listens on; main returns the command's exit
// code once its context ends. A command that exits before it listens, or
// does not listen within 60 s, fails the test with what it wrote to errb.
// The server is stopped at the test's cleanup.
func StartServing(t testing.TB, errb fmt.Stringer, main func(ctx context.Context, ready func(addr string)) int) *Serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Serving{done: make(chan int, 1), cancel: cancel}
	addrc := make(chan string, 1)
	go func() { s.done <- main(ctx, func(a string) { addrc <- a }) }()
	select {
	case s.Addr = <-addrc:
	case code := <-s.done:
		cancel()
		t.Fatalf("server exited with %d before listening: %s", code, errb.String())
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("server did not start within 60 s")
	}
	t.Cleanup(func() { s.Stop(t) })
	return s
}

// Stop ends the server's context and returns its exit code. A test may
// stop the server itself; the cleanup then finds it stopped.
func (s *Serving) Stop(t testing.TB) int {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.done:
		s.done <- code // for the next Stop
		return code
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop within 30 s")
		return -1
	}
}

// SyncBuffer is a bytes.Buffer safe for a server's writes and the test's
// reads.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// NoRedirect is an http.Client's CheckRedirect that returns a redirect
// itself, for the test to check where it leads.
func NoRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Do sends a request with the headers hdr, not following redirects
// (NoRedirect), and returns the response and its body.
func Do(t testing.TB, method, u string, hdr http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := (&http.Client{CheckRedirect: NoRedirect, Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// Get is a GET of u: the response, whatever its status, and its body.
func Get(t testing.TB, u string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// GetPage is the body of a GET of u, which must answer 200.
func GetPage(t testing.TB, u string) string {
	t.Helper()
	resp, b := Get(t, u)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %s", u, resp.Status, b)
	}
	return b
}

// GetJSONInto decodes the JSON of a GET of u, which must answer 200, into v.
func GetJSONInto(t testing.TB, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}
