package web

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoImportOfAPI: web, and the view package it shares with api, do not
// depend on package api, directly or through another package:
// what a page and the wire protocol both need lives in view or txnindex.
// It asks the go command, as `go list -deps ./web` does;
// go test puts its own go first on PATH.
func TestNoImportOfAPI(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	const api = "github.com/txnscope/txnscope/api"
	for _, pkg := range []string{"github.com/txnscope/txnscope/web", "github.com/txnscope/txnscope/view"} {
		out, err := exec.Command(goCmd, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 2 {
			t.Fatalf("go list -deps %s listed %d packages", pkg, len(deps))
		}
		for _, d := range deps {
			if d == api || strings.HasPrefix(d, api+"/") {
				t.Errorf("%s depends on %s; move what it needs into package view or txnindex", pkg, d)
			}
		}
	}
}
