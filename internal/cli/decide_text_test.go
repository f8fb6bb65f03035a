package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDecideTextBelowPositionOneLine: decide --from N in text writes the
// offsets below the position as one before_position line (they have one
// reason), then a line per decision from N on, as before.
func TestDecideTextBelowPositionOneLine(t *testing.T) {
	var so, se bytes.Buffer
	if code := run(context.Background(), []string{"decide", "--demo", "interleaved", "--from", "7"}, &env{stdout: &so, stderr: &se}); code != exitOK {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	var below, after []string
	for _, l := range strings.Split(strings.TrimSpace(so.String()), "\n") {
		switch {
		case strings.HasPrefix(l, "#"):
		case strings.Contains(l, "before_position"):
			below = append(below, l)
		default:
			after = append(after, l)
		}
	}
	if len(below) != 1 || !strings.HasPrefix(below[0], "0-6 ") || !strings.Contains(below[0], "below the fetch position 7") {
		t.Fatalf("below the position: %q", below)
	}
	if len(after) == 0 || !strings.HasPrefix(after[0], "7-8 ") {
		t.Fatalf("from the position on: %q", after)
	}
}
