package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
)

// damagedSpanning writes the spanning demo with a bad CRC in the first
// batch of its middle segment (00000000000000000006.log) and the recovery
// point rp: at or below 6, a restart recovers the segment and the read
// stops at its start (offsets 6-12 are in its damaged bytes, and segment 13
// follows). It returns the partition directory, inside its log directory.
func damagedSpanning(t *testing.T, rp string) string {
	t.Helper()
	root, b := testfixture.WriteScenarioFile(t, filepath.Join("..", "..", "scenario", "demos", "spanning.txn"))
	dir := filepath.Join(root, b.Dir)
	seg := filepath.Join(dir, "00000000000000000006.log")
	raw, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/3] ^= 0xff // inside the first batch, past its CRC field
	if err := os.WriteFile(seg, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "recovery-point-offset-checkpoint"), []byte("0\n1\ndemo-spanning 0 "+rp+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDecideDamagedSegmentGap: the offsets between the last batch read
// before a damaged segment's damage and the next segment are not "no
// offsets between segments" but the damaged bytes, as diagnose's
// recovery_truncates says; the whole load and the segment windows say so
// alike.
func TestDecideDamagedSegmentGap(t *testing.T) {
	dir := damagedSpanning(t, "0")
	nd := decideOK(t, "--format", "ndjson", dir)
	if !strings.Contains(nd, `"from":6,"to":12,"decision":"gap","cause":"gap_damaged"`) {
		t.Errorf("no damaged gap at offsets 6-12 in:\n%s", nd)
	}
	if strings.Contains(nd, "gap_segment_boundary") {
		t.Errorf("a segment boundary gap left:\n%s", nd)
	}
	if seg := decideOK(t, "--format", "ndjson", "--by-segment", dir); seg != nd {
		t.Errorf("by segment:\n%s\nwhole load:\n%s", seg, nd)
	}
	text := decideOK(t, dir)
	if !strings.Contains(text, "in the damaged bytes of the segment before") {
		t.Errorf("the text does not say the gap is damaged bytes:\n%s", text)
	}
	if seg := decideOK(t, "--by-segment", dir); uncommented(seg) != uncommented(text) {
		t.Errorf("text by segment:\n%s\nwhole load:\n%s", seg, text)
	}
}
