package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/view"
)

// diagnosing gives c a Diagnoser of its own, as New gives the server's
// catalog the server's: the pages, the API and the loads' evidence need
// one.
func diagnosing(c *catalog) *catalog {
	c.diags = view.NewDiagnoser()
	return c
}

// The helpers the server's tests share. The fixtures (kfake clusters, log
// dirs) come from internal/testfixture, as internal/cli's and e2e's do, so
// that a page and the command are tested on one story.

// realdata holds the real files the tests read (testdata/realdata/README.md).
const realdata = "../testdata/realdata"

// serveErr is New's error for serve's default options changed by set, nil
// when the server starts (it is then closed).
func serveErr(t *testing.T, set ...func(*Options)) error {
	t.Helper()
	o := DefaultOptions()
	o.Addr, o.Big = "127.0.0.1:0", false
	for _, f := range set {
		f(&o)
	}
	s, err := New(context.Background(), o)
	if err == nil {
		s.Close()
	}
	return err
}

// writeScenario builds the scenario file name into the log directory dir,
// as `txnscope scenario build NAME --out DIR` does.
func writeScenario(t *testing.T, name, dir string) {
	t.Helper()
	sc, err := scenario.ParseFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sc.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's writes and the
// test's reads.
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

func get(t *testing.T, u string) (*http.Response, string) {
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

// recordPoll writes the fetch exchanges of one poll of topic's partition 0
// at addr to file, a raw capture, as `txnscope watch --once --record FILE`
// does.
func recordPoll(t *testing.T, addr, topic, file string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	w, err := live.Dial(ctx, live.Config{Brokers: []string{addr}, Topic: topic, Partitions: []int32{0}, From: -1, Record: f})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Poll(ctx); err != nil {
		w.Close()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
