package cli

import (
	"io"
	"net/http"
	"testing"
)

// TestCompareAPIEqualsCLI: GET …/compare answers what
// `decide --compare-variants --format ndjson` prints for the same
// partition, byte for byte.
func TestCompareAPIEqualsCLI(t *testing.T) {
	code, want, errOut := runArgs(t, "decide", "--compare-variants", "--format", "ndjson", "--demo", "interleaved")
	if code != 0 {
		t.Fatalf("decide: %d %s", code, errOut)
	}
	s := startServe(t)
	resp, err := http.Get(s.url("/api/v1/sources/interleaved/partitions/demo-interleaved/0/compare"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("GET …/compare: %s %s\n%s", resp.Status, resp.Header.Get("Content-Type"), got)
	}
	if string(got) != want {
		t.Errorf("GET …/compare:\n%s\ndecide --compare-variants --format ndjson:\n%s", got, want)
	}
	if len(want) < 100 {
		t.Errorf("decide wrote only %q", want)
	}
}
