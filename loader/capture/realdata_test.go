package capture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testtool"
)

const realdata = "../../testdata/realdata"

func realCaptures(t testing.TB) []string {
	var out []string
	filepath.WalkDir(realdata, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".pcap") || strings.HasSuffix(p, ".pcapng")) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestRealCaptures decodes every capture in testdata/realdata: segmentio's
// kafka-go captures (pcapng, Linux cooked v2) hold Fetch v10 responses
// mixing message formats; deepflow's hold Fetch v12 with empty responses.
func TestRealCaptures(t *testing.T) {
	testtool.NeedDir(t, realdata)
	files := realCaptures(t)
	if len(files) == 0 {
		t.Fatal("no captures found")
	}
	var fetches, batches int
	for _, f := range files {
		c, err := Open(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, fe := range c.Fetches {
			fetches++
			batches += len(fe.Batches)
		}
		if strings.Contains(f, "segmentio") {
			if len(c.Fetches) == 0 {
				t.Errorf("%s: no fetch decoded (%d packets, problems %v)", f, c.Packets, c.Problems)
			}
			for _, fe := range c.Fetches {
				if fe.Version != 10 || fe.HighWatermark <= 0 || fe.Aborted != nil {
					t.Errorf("%s: fetch v%d HWM %d aborted %v", f, fe.Version, fe.HighWatermark, fe.Aborted)
				}
			}
		}
	}
	if batches == 0 {
		t.Fatal("no batch decoded from any real capture")
	}
	t.Logf("%d captures, %d fetch partitions, %d batches", len(files), fetches, batches)
}
