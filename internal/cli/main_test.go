package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/scenario/gen"
)

// TestMain removes the directory the demos were written to once the tests
// end, as Main does when the command ends: a test run leaves nothing in the
// temporary directory.
func TestMain(m *testing.M) {
	code := m.Run()
	gen.RemoveDemoFiles()
	os.Exit(code)
}

func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &env{stdout: &out, stderr: &errb})
	return code, out.String(), errb.String()
}

// TestUsage: every command has --help (exit 0), bad usage exits 2 with one line.
func TestUsage(t *testing.T) {
	if code, out, _ := runArgs(t, "--help"); code != 0 || !strings.Contains(out, "decide") {
		t.Errorf("--help: %d %q", code, out)
	}
	if code, out, _ := runArgs(t, "help"); code != 0 || !strings.Contains(out, "decide") {
		t.Errorf("help: %d %q", code, out)
	}
	for _, c := range commands() {
		code, out, _ := runArgs(t, c.name, "--help")
		if code != 0 || !strings.Contains(out, "Usage: txnscope "+c.name) {
			t.Errorf("%s --help: code %d, out %q", c.name, code, out)
		}
		if code2, out2, _ := runArgs(t, "help", c.name); code2 != code || out2 != out {
			t.Errorf("help %s: code %d, not what %s --help prints", c.name, code2, c.name)
		}
		code, _, errOut := runArgs(t, c.name, "--no-such-flag")
		if code != 2 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s bad flag: code %d, stderr %q", c.name, code, errOut)
		}
	}
	if code, _, errOut := runArgs(t, "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: %d %q", code, errOut)
	}
	if code, _, _ := runArgs(t, "decide", "--isolation", "maybe", "--demo", "interleaved"); code != 2 {
		t.Errorf("bad isolation: %d", code)
	}
}

func TestDecideDemo(t *testing.T) {
	code, out, errOut := runArgs(t, "decide", "--demo", "interleaved", "--format", "ndjson")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 17 {
		t.Fatalf("%d lines, want one per offset (17)", len(lines))
	}
	if !strings.Contains(lines[2], `"offset":2,`) || !strings.Contains(lines[2], `"decision":"aborted"`) {
		t.Errorf("offset 2: %s", lines[2])
	}
}

// TestServe runs the real server on a loopback port and reads /healthz and
// the demo index.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0"}, &env{stdout: io.Discard, stderr: io.Discard, ready: func(a string) { addrc <- a }})
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}
	for _, path := range []string{"/healthz", "/"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Errorf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d after shutdown", code)
	}
}

// TestServeOptionErrors: serve hands its flags to server.New, whose
// refusal of a value is the caller's mistake (exit 2, one line naming the
// flag), and whose other errors are failures (exit 1).
func TestServeOptionErrors(t *testing.T) {
	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"a limit that is not positive", []string{"--max-sources", "0"}, exitUsage, "--max-sources must be positive, not 0"},
		{"a public address without --listen-public", []string{"--addr", "0.0.0.0:0"}, exitUsage, "add --listen-public"},
		{"an origin that is not one", []string{"--allowed-origin", "https://x.example/path"}, exitUsage, "--allowed-origin"},
		{"a topic without a cluster", []string{"--topic", "orders"}, exitUsage, "--bootstrap and --topic are required"},
		{"a partition that is not a number", []string{"--bootstrap", "127.0.0.1:1", "--topic", "orders", "--partition", "x"}, exitUsage, `--partition: "x" is not a partition number`},
		{"a token too short", []string{"--auth-token-file", short}, exitFailure, "at least 16 characters"},
	} {
		code, _, errOut := runArgs(t, append([]string{"serve", "--big=false", "--addr", "127.0.0.1:0"}, c.args...)...)
		if code != c.code || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and one line saying %q", c.name, code, errOut, c.code, c.want)
		}
	}
}
