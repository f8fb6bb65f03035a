package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/txnscope/txnscope/internal/testtool"
)

// The binary built from this checkout: what cmd/server and cmd/txnscope
// wire, signals and build information included.

const interleaved = "/sources/interleaved/partitions/demo-interleaved/0"

// buildServer builds the server binary from this checkout.
func buildServer(t *testing.T, dir string, env ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "server")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/server")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestGracefulShutdown runs the real binary, holds a websocket stream and an
// HTTP response in flight, and sends SIGTERM (then, in a second run,
// SIGINT): the websocket gets a 1001 close frame, the HTTP response is
// finished whole, and the process exits 0.
func TestGracefulShutdown(t *testing.T) {
	bin := buildServer(t, "../..")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--shutdown-grace", "60s")
			stdout, _ := cmd.StdoutPipe()
			var stderr syncBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			defer func() {
				select {
				case <-exited:
				default:
					cmd.Process.Kill()
				}
			}()
			first, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatalf("no banner: %v %s", err, stderr.String())
			}
			go io.Copy(io.Discard, stdout)
			addr := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(first), "txnscope serving on http://"), "/")
			go func() { exited <- cmd.Wait() }()

			ws, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws/v1"+interleaved, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			readUntilDone(t, ws)

			// A long NDJSON answer (the 1M-batch demo's first 300,000
			// offsets, far more than the socket buffers hold): the handler
			// is still writing when the signal comes.
			resp, err := (&http.Client{Timeout: 120 * time.Second}).Get("http://" + addr + "/api/v1/sources/big/partitions/demo-big/0/decisions?to=300000")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			if _, err := br.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			ws.SetReadDeadline(time.Now().Add(60 * time.Second))
			for {
				_, _, err := ws.ReadMessage()
				if err == nil {
					continue
				}
				var ce *websocket.CloseError
				if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
					t.Errorf("websocket ended with %v, want close 1001", err)
				}
				break
			}
			// The in-flight answer ends cleanly (the chunked body's final
			// chunk arrives) and reaches offset 300,000.
			rest, err := io.ReadAll(br)
			if err != nil {
				t.Errorf("in-flight response cut by the shutdown: %v", err)
			}
			lines := strings.Split(strings.TrimSpace(string(rest)), "\n")
			var last struct {
				Offset int64 `json:"offset"`
				To     int64 `json:"to"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || max(last.Offset, last.To) < 299_000 {
				t.Errorf("last line %q (%v)", lines[len(lines)-1], err)
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("exit: %v; stderr %s", err, stderr.String())
				}
			case <-time.After(60 * time.Second):
				t.Fatal("still running 60 s after the signal")
			}
			if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
				t.Errorf("still answering after exit")
			}
		})
	}
}

// TestVersionBinary builds the binary in a git checkout of this tree and
// checks that --version and the version command print the module path, the
// pseudo-version and the VCS revision the toolchain stamped from git.
func TestVersionBinary(t *testing.T) {
	git := testtool.Need(t, "git")
	out, err := exec.Command(git, "-C", "../..", "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	// A plain clone of the working tree, committed: go stamps VCS data
	// only from a repository whose root holds a .git directory (a git
	// worktree's .git file is not enough), and the test must see the
	// tree as it is, uncommitted changes included.
	repo := t.TempDir()
	for _, f := range strings.Fields(string(out)) {
		b, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			continue // listed but deleted in the working tree
		}
		os.MkdirAll(filepath.Join(repo, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(repo, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "v"}} {
		if out, err := exec.Command(git, append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	rev, err := exec.Command(git, "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	sha := strings.TrimSpace(string(rev))
	bin := buildServer(t, repo, "GOFLAGS=-buildvcs=true")
	want := regexp.MustCompile(`^txnscope github.com/txnscope/txnscope v0\.0\.0-\d{14}-` + sha[:12] + ` revision ` + sha + ` \d{4}-\d\d-\d\dT\S+ go1\.\d+`)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil || !want.Match(out) {
			t.Errorf("server %v: %q (%v), want %s", args, out, err, want)
		}
	}
	if out, err := exec.Command(bin, "version", "extra").CombinedOutput(); err == nil {
		t.Errorf("version extra: %q, want exit 2", out)
	}
}

// readUntilDone reads a stream to its done message and returns it.
func readUntilDone(t *testing.T, c *websocket.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	for {
		_, m, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("stream ended before done: %v", err)
		}
		if strings.Contains(string(m), `"type":"done"`) {
			return string(m)
		}
	}
}
