package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// The serve command run as main runs it, for the tests that hold its
// answers against the other commands' (one_answer_test.go) or drive its
// flags (hostile_live_test.go); the server's own tests are package
// server's.

// served is a real server started by run, as main does, on a loopback port.
type served struct {
	addr      string
	out, errb *syncBuffer
	done      chan int
	cancel    context.CancelFunc
}

// startServe runs "server serve ARGS" and waits until it listens. The demos
// are loaded; the 1M-batch one is left out unless ARGS ask for it.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{out: &syncBuffer{}, errb: &syncBuffer{}, done: make(chan int, 1), cancel: cancel}
	addrc := make(chan string, 1)
	all := append([]string{"serve", "--addr", "127.0.0.1:0", "--big=false"}, args...)
	go func() {
		s.done <- run(ctx, all, &env{stdout: s.out, stderr: s.errb, ready: func(a string) { addrc <- a }})
	}()
	select {
	case s.addr = <-addrc:
	case code := <-s.done:
		cancel()
		t.Fatalf("server exited with %d before listening: %s", code, s.errb.String())
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("server did not start within 60 s")
	}
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *served) stop(t *testing.T) int {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.done:
		s.done <- code // stop may be called twice (test, then cleanup)
		return code
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop within 30 s")
		return -1
	}
}

func (s *served) url(p string) string { return "http://" + s.addr + p }

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func do(t *testing.T, method, u string, hdr http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := (&http.Client{CheckRedirect: noRedirect, Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// startLiveServe runs the real command on a loopback port and returns its
// address and the function that stops it (and returns its exit code).
func startLiveServe(t *testing.T, args ...string) (string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan int, 1)
	var errb syncBuffer
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--big=false"}, args...),
			&env{stdout: io.Discard, stderr: &errb, ready: func(a string) { addrc <- a }})
	}()
	select {
	case addr := <-addrc:
		var once sync.Once
		code := -1
		stop := func() int {
			once.Do(func() { cancel(); code = <-done })
			return code
		}
		t.Cleanup(func() { stop() })
		return addr, stop
	case code := <-done:
		cancel()
		t.Fatalf("serve exited %d: %s", code, errb.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	return "", nil
}

func getPage(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %s", u, resp.Status, b)
	}
	return string(b)
}

func getJSONInto(t *testing.T, u string, v any) {
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
