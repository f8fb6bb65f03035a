package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const committed = "../../static/js/contract.js"

// TestCommittedContractFresh fails when static/js/contract.js is not what
// the Go constants generate today: a code, name or offset changed in Go
// without `go generate ./static`.
func TestCommittedContractFresh(t *testing.T) {
	have, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	c, err := current()
	if err != nil {
		t.Fatal(err)
	}
	if err := stale(committed, have, c); err != nil {
		t.Fatal(err)
	}
}

// TestChangedContractFindsJSStale changes the Go side of the contract (the
// tables the generator reads) and checks that the committed JavaScript is
// then found stale, at the line that changed.
func TestChangedContractFindsJSStale(t *testing.T) {
	have, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	list := func(c *contract, name string) []string {
		for _, l := range c.Lists {
			if l.Name == name {
				return l.Names
			}
		}
		t.Fatalf("no list %s", name)
		return nil
	}
	for _, tc := range []struct {
		name   string
		change func(*contract)
		line   string // in the error: the committed line that is now wrong
	}{
		{"two causes swap codes", func(c *contract) {
			cs := list(c, "CAUSES")
			i, j := slices.Index(cs, "commit_marker"), slices.Index(cs, "abort_marker")
			cs[i], cs[j] = cs[j], cs[i]
		}, `"commit_marker", // 7`},
		{"a cause is removed, the later codes move", func(c *contract) {
			for k := range c.Lists {
				if c.Lists[k].Name == "CAUSES" {
					c.Lists[k].Names = slices.Delete(c.Lists[k].Names, 1, 2)
				}
			}
		}, `"non_transactional", // 1`},
		{"a verdict is added", func(c *contract) {
			for k := range c.Lists {
				if c.Lists[k].Name == "VERDICTS" {
					c.Lists[k].Names = append(c.Lists[k].Names, "skipped")
				}
			}
		}, `]),`},
		{"a flag changes", func(c *contract) {
			for k := range c.Consts {
				if c.Consts[k].Name == "F_ABORT" {
					c.Consts[k].Value = 32
				}
			}
		}, "F_ABORT: 8"},
		{"a record field moves", func(c *contract) {
			for _, g := range c.Groups {
				if g.Name == "DEC" {
					g.Fields[6].Value++ // CAUSE
				}
			}
		}, "DEC: Object.freeze({ FROM: 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := current()
			if err != nil {
				t.Fatal(err)
			}
			tc.change(&c)
			err = stale(committed, have, c)
			if err == nil || !strings.Contains(err.Error(), "is stale") || !strings.Contains(err.Error(), tc.line) {
				t.Fatalf("stale = %v, want the line %q named", err, tc.line)
			}
		})
	}
}

// TestCauseReorderInGoFindsJSStale edits txnindex itself: the command is
// built with an overlay of decision.go in which CauseCommitMarker and
// CauseAbortMarker swap places, and its -check must then fail on the
// committed contract.js, which it accepts without the overlay.
func TestCauseReorderInGoFindsJSStale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command twice")
	}
	src, err := filepath.Abs("../../txnindex/decision.go")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	const order = "\tCauseCommitMarker\n\tCauseAbortMarker\n"
	if !strings.Contains(string(b), order) {
		t.Fatalf("%s no longer declares %q: update this test to reorder two other causes", src, order)
	}
	dir := t.TempDir()
	edited, overlay := filepath.Join(dir, "decision.go"), filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(edited, []byte(strings.Replace(string(b), order, "\tCauseAbortMarker\n\tCauseCommitMarker\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(map[string]map[string]string{"Replace": {src: edited}})
	if err := os.WriteFile(overlay, j, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := filepath.Abs(committed)
	run := func(args ...string) (string, error) {
		cmd := exec.Command("go", append(append([]string{"run"}, args...), ".", "-check", "-out", out)...)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	if msg, err := run(); err != nil {
		t.Fatalf("-check on the real txnindex: %v\n%s", err, msg)
	}
	msg, err := run("-overlay", overlay)
	if err == nil || !strings.Contains(msg, "is stale") || !strings.Contains(msg, `"commit_marker", // 7`) {
		t.Fatalf("-check with commit and abort markers swapped in Go: err %v, output:\n%s", err, msg)
	}
	t.Logf("%s", strings.TrimSpace(msg))
}
