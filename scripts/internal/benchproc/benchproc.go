// Package benchproc runs the server binary for the benchmark programs
// (scripts/loadbench, scripts/evictbench) and reads its memory from /proc.
package benchproc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

var servingOn = regexp.MustCompile(`serving on (http://\S+?)/`)

// Serve starts the server binary with args (which should listen on
// 127.0.0.1:0) and returns once it printed its "serving on http://…/"
// line, with the base URL. The rest of its output is discarded, its stderr
// is ours; cancelling ctx kills it, and the caller waits for it (cmd.Wait).
func Serve(ctx context.Context, server string, args ...string) (cmd *exec.Cmd, base string, err error) {
	cmd = exec.CommandContext(ctx, server, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if m := servingOn.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, out)
			return cmd, m[1], nil
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return nil, "", fmt.Errorf("%s exited before listening", server)
}

// Status reads a process's peak and current resident set sizes (VmHWM,
// VmRSS), in KiB.
func Status(pid int) (hwm, rss int64, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, 0, err
	}
	found := 0
	for l := range strings.Lines(string(b)) {
		for _, f := range []struct {
			name string
			v    *int64
		}{{"VmHWM:", &hwm}, {"VmRSS:", &rss}} {
			if v, ok := strings.CutPrefix(l, f.name); ok {
				if *f.v, err = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err != nil {
					return 0, 0, fmt.Errorf("%s %s: %w", filepath.Join("/proc", strconv.Itoa(pid), "status"), f.name, err)
				}
				found++
			}
		}
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("pid %d: no VmHWM and VmRSS in /proc", pid)
	}
	return hwm, rss, nil
}
