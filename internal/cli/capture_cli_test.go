package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testtool"
)

// TestDecideCaptureOfKcat: `server decide` on a tshark capture of kcat
// consuming read_committed from a kfake broker delivers exactly the offsets
// kcat printed, and `diagnose` on it reports the broker's LSO.
func TestDecideCaptureOfKcat(t *testing.T) {
	path, _, printed := testtool.KcatCapture(t, 300)
	if len(printed) == 0 {
		t.Fatal("kcat printed nothing")
	}

	code, nd, errOut := runArgs(t, "decide", path, "--format", "ndjson", "--topic", "txns")
	if code != 0 {
		t.Fatalf("decide: %d %s", code, errOut)
	}
	var delivered []int64
	aborted := 0
	for _, line := range strings.Split(strings.TrimSpace(nd), "\n") {
		var m struct {
			Offset   int64  `json:"offset"`
			Decision string `json:"decision"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		switch m.Decision {
		case "delivered":
			delivered = append(delivered, m.Offset)
		case "aborted":
			aborted++
		}
	}
	if !slices.Equal(delivered, printed) || aborted == 0 {
		t.Errorf("decide delivers %v (%d aborted)\nkcat printed    %v", delivered, aborted, printed)
	}
	code, js, errOut := runArgs(t, "diagnose", path, "--format", "json")
	if code != 0 || !strings.Contains(js, `"last_stable_offset"`) {
		t.Errorf("diagnose: %d %s %s", code, errOut, js)
	}
}

// TestDecideCaptureNoFetch: a capture holding no Fetch (a produce
// exchange) makes decide say so plainly and fail, instead of `no
// partition matches --topic "" --partition -1`.
func TestDecideCaptureNoFetch(t *testing.T) {
	path := "../../testdata/realdata/deepflowio_deepflow/agent/resources/test/flow_generator/kafka/00-produce-v2.pcap"
	testtool.NeedDir(t, "../../testdata/realdata")
	code, out, errOut := runArgs(t, "decide", path)
	if code != exitFailure || out != "" {
		t.Fatalf("decide of a capture without Fetch: exit %d, stdout %q", code, out)
	}
	if strings.Contains(errOut, "no partition matches") || !strings.Contains(errOut, "no Fetch exchange to decide") || !strings.Contains(errOut, "Produce") {
		t.Errorf("decide's error does not say the capture holds no Fetch:\n%s", errOut)
	}
}
