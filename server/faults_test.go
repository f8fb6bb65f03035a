package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/txnscope/txnscope/loader/input"
)

const loadedBatches = "/api/v1/sources/load1/partitions/demo-interleaved/0/batches/"

func batchJSON(t *testing.T, s *served, offset int) (records int, note string) {
	t.Helper()
	resp, body := do(t, "GET", s.url(loadedBatches+fmt.Sprint(offset)), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("batch %d: %s %s", offset, resp.Status, body)
	}
	var b struct {
		RecordList  []json.RawMessage `json:"record_list"`
		RecordsNote string            `json:"records_note"`
	}
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	return len(b.RecordList), b.RecordsNote
}

// TestSegmentChangesWhileServing: the loaded segment is truncated while the
// server runs (as a live broker's active segment is by log recovery or a
// follower's truncation to the leader epoch, KIP-101), then grows back
// beyond its loaded size. Rereading a batch past the cut reports the file,
// its new size and the batch's position; batches before the cut still
// decode; nothing panics; after the growth every loaded batch decodes again.
func TestSegmentChangesWhileServing(t *testing.T) {
	dir := buildDemoDir(t)
	seg := filepath.Join(dir, "demo-interleaved-0", "00000000000000000000.log")
	orig, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--load", dir)
	if n, note := batchJSON(t, s, 16); n != 1 || note != "" {
		t.Fatalf("before: %d records, note %q", n, note)
	}
	cut := int64(len(orig) / 2)
	if err := os.Truncate(seg, cut); err != nil {
		t.Fatal(err)
	}
	n, note := batchJSON(t, s, 16)
	want := regexp.MustCompile(fmt.Sprintf(`segment %s was truncated to %d bytes \(%#x\) after it was loaded with %d: the batch at byte 0x[0-9a-f]+ needs bytes up to 0x[0-9a-f]+`,
		regexp.QuoteMeta(seg), cut, cut, len(orig)))
	if n != 0 || !want.MatchString(note) {
		t.Errorf("after the truncation: %d records, note %q", n, note)
	}
	if n, note := batchJSON(t, s, 0); n != 2 || note != "" {
		t.Errorf("a batch before the cut: %d records, note %q", n, note)
	}
	// Grows: the old bytes come back and more are appended (new batches
	// the snapshot does not know).
	if err := os.WriteFile(seg, append(append([]byte{}, orig...), make([]byte, 4096)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, note := batchJSON(t, s, 16); n != 1 || note != "" {
		t.Errorf("after the growth: %d records, note %q", n, note)
	}
	// Same size, other bytes: the loader's batch check catches it.
	bad := append([]byte{}, orig...)
	for i := len(bad) / 2; i < len(bad); i++ {
		bad[i] ^= 0xff
	}
	os.WriteFile(seg, bad, 0o644)
	if n, note := batchJSON(t, s, 16); n != 0 || !strings.Contains(note, "records could not be decoded") || !strings.Contains(note, "byte") {
		t.Errorf("rewritten: %d records, note %q", n, note)
	}
	if resp, _ := do(t, "GET", s.url("/healthz"), nil); resp.StatusCode != 200 {
		t.Errorf("server down: %s", resp.Status)
	}
}

// TestSourceDeleted: the loaded directory is deleted (retention, a
// reassignment moving the partition away). The decisions are served from
// memory; a batch's records say the directory is gone.
func TestSourceDeleted(t *testing.T) {
	dir := buildDemoDir(t)
	s := startServe(t, "--load", dir)
	// A log directory's partitions are read when first asked for
	// (catalog_lazy.go): ask, then delete.
	if resp, _ := do(t, "GET", s.url("/api/v1/sources/load1/partitions/demo-interleaved/0/decisions"), nil); resp.StatusCode != 200 {
		t.Fatalf("before the delete: %s", resp.Status)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	n, note := batchJSON(t, s, 2)
	if n != 0 || note != fmt.Sprintf("records could not be decoded: the source directory %s was deleted after it was loaded", filepath.Join(dir, "demo-interleaved-0")) {
		t.Errorf("deleted: %d records, note %q", n, note)
	}
	for _, p := range []string{"/api/v1/sources/load1/partitions/demo-interleaved/0/decisions", "/sources/load1/partitions/demo-interleaved/0"} {
		if resp, body := do(t, "GET", s.url(p), nil); resp.StatusCode != 200 || len(body) == 0 {
			t.Errorf("%s after the delete: %s", p, resp.Status)
		}
	}
}

// TestCaptureEndsMidStream: a real capture (kfake, tshark, kcat) cut short,
// as when tcpdump is killed mid-write. The server loads what was captured
// before the cut, warns with the file and byte position of the cut message,
// and serves the fetches that survived.
func TestCaptureEndsMidStream(t *testing.T) {
	testtool.Need(t, "tshark")
	path, _, _ := testtool.KcatCapture(t, 200)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut inside a packet (pcapng block), or inside a Kafka message that
	// spans packets: both are reported with the byte position.
	cutMsg := regexp.MustCompile(`byte 0x[0-9a-f]+: (pcapng block of \d+ bytes cut after \d+ \(capture ended mid-packet|frame of \d+ bytes cut after \d+ \(capture ended mid-message)`)
	tried := 0
	// The consumer's fetches are at the end of the capture, after the
	// producer's traffic.
	for pct := 99; pct >= 80; pct-- {
		cut := filepath.Join(t.TempDir(), fmt.Sprintf("cut%d.pcapng", pct))
		os.WriteFile(cut, full[:len(full)*pct/100], 0o644)
		ld, err := input.Open(cut)
		if err != nil || len(ld.Partitions) == 0 || len(ld.Partitions[0].Log.Batches) == 0 {
			continue
		}
		found := false
		for _, p := range ld.Problems {
			found = found || cutMsg.MatchString(p.Error())
		}
		if !found {
			continue
		}
		tried++
		s := startServe(t, "--load", cut)
		if !strings.Contains(s.errb.String(), "warning: capture: "+cut) || !cutMsg.MatchString(s.errb.String()) {
			t.Errorf("%d%%: stderr %q", pct, s.errb.String())
		}
		resp, body := do(t, "GET", s.url("/api/v1/sources"), nil)
		if resp.StatusCode != 200 || !strings.Contains(body, `"id": "load1"`) {
			t.Errorf("%d%%: sources %s %.300s", pct, resp.Status, body)
		}
		l := ld.Partitions[0].Log
		resp, body = do(t, "GET", s.url(fmt.Sprintf("/api/v1/sources/load1/partitions/%s/%d/decisions", l.Topic, l.Partition)), nil)
		if resp.StatusCode != 200 || !strings.Contains(body, fmt.Sprintf(`"to":%d,`, l.Batches[len(l.Batches)-1].LastOffset())) {
			t.Errorf("%d%%: the batches fetched before the cut are not all served: %s %.300s", pct, resp.Status, body)
		}
		s.stop(t)
		if tried == 2 {
			break
		}
	}
	if tried == 0 {
		t.Fatalf("no cut of the %d-byte capture kept a fetch and cut a message", len(full))
	}
}

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
