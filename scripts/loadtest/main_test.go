package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadShort is the load test bounded for CI: the real server binary on
// loopback, 20 websocket clients streaming the interleaved demo over and
// over and 20 API requests per second for 5 s; every stream must end with
// done's count equal to the decisions received, no request may fail, every
// endpoint is exercised and the requests due are all sent.
// Latencies are logged, never asserted.
func TestLoadShort(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "server")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/server").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--addr", "127.0.0.1:0", "--big=false")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Stopped as a person stops it (SIGTERM), so that it removes the
	// demos' files it wrote; killed if it does not end.
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	base := ""
	sc := bufio.NewScanner(stdout)
	found := make(chan string, 1)
	go func() {
		sent := false // keep draining the output after the URL
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "http://127.0.0.1:"); i >= 0 && !sent {
				found <- strings.Fields(sc.Text()[i:])[0]
				sent = true
			}
		}
	}()
	select {
	case base = <-found:
	case <-time.After(60 * time.Second):
		t.Fatal("the server printed no URL")
	}
	base = strings.TrimRight(base, "/")
	r := run(base, "interleaved", "demo-interleaved", 20, 20, 5*time.Second)
	t.Log(r.String())
	if r.Errors() > 0 || r.streams.Load() < 20 {
		t.Errorf("%d errors, %d streams completed\n%s", r.Errors(), r.streams.Load(), r.String())
	}
	// The generator issues the requests due by elapsed time, so a starved
	// generator cannot quietly send fewer (a ticker once dropped 85%).
	// This counts requests, not how fast they were answered.
	if n := len(r.latencies) + len(r.apiErrs); n < 20*5*9/10 {
		t.Errorf("%d API requests issued in 5 s at 20/s", n)
	}
	for _, k := range []string{"sources", "partitions", "diagnosis", "batch", "decisions"} {
		if len(r.byKind[k]) == 0 {
			t.Errorf("no %s request answered", k)
		}
	}
}
