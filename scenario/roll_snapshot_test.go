package scenario

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestRollSnapshot: "roll snapshot" writes, named for the new segment's
// base offset, the producer snapshot the broker takes at a roll: byte for
// byte the one at the log end of the scenario cut just before that roll
// (a transaction open across it, a v2 producer's bumped epoch, an
// idempotent producer). A plain "roll" writes none, and a roll of an empty
// segment nothing either.
func TestRollSnapshot(t *testing.T) {
	lines := []string{
		"producer a transactional",
		"producer b transactional tv2",
		"producer i idempotent",
		"begin a", "send a 2", "begin b", "send b", "commit b", "send i",
		"roll snapshot",
		"send a", "begin b", "send b 3",
		"roll",
		"abort a", "send i 2",
		"roll snapshot",
		"roll snapshot", // the segment is empty: no roll, no snapshot
		"commit b",
	}
	build := func(ls []string) *Built {
		t.Helper()
		sc, err := Parse(strings.NewReader(strings.Join(ls, "\n")+"\n"), "t.txn")
		if err != nil {
			t.Fatal(err)
		}
		b, err := sc.Build()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	snapshots := func(b *Built) map[string][]byte {
		m := map[string][]byte{}
		for _, f := range b.Files {
			if strings.HasSuffix(f.Path, ".snapshot") {
				m[f.Path[strings.LastIndexByte(f.Path, '/')+1:]] = f.Data
			}
		}
		return m
	}
	b := build(lines)
	got := snapshots(b)
	var want []string
	for i, l := range lines {
		if l != "roll snapshot" {
			continue
		}
		prefix := build(lines[:i])
		leo := prefix.Log.LogEndOffset
		name := fmt.Sprintf("%020d.snapshot", leo)
		if i > 0 && lines[i-1] == "roll snapshot" {
			continue
		}
		want = append(want, name)
		if !bytes.Equal(got[name], snapshots(prefix)[name]) {
			t.Errorf("%s: %x, want the snapshot at the end of the scenario before it, %x", name, got[name], snapshots(prefix)[name])
		}
	}
	want = append(want, fmt.Sprintf("%020d.snapshot", b.Log.LogEndOffset))
	if len(got) != len(want) {
		t.Errorf("snapshots %d, want %d (%v)", len(got), len(want), want)
	}
	if _, err := Parse(strings.NewReader("roll now\n"), "t.txn"); err == nil || !strings.Contains(err.Error(), `want "roll [snapshot]"`) {
		t.Errorf("roll now: %v", err)
	}
}
