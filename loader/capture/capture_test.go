package capture

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/txnindex"
)

// tsharkFetch is what tshark's Kafka dissector reports for one partition of
// a Fetch response.
type tsharkFetch struct {
	corr, hwm, lso int64
	aborted        []txnindex.AbortedTransaction
}

func tsharkFetches(t *testing.T, tshark, path string, port int) []tsharkFetch {
	t.Helper()
	out, err := exec.Command(tshark, "-r", path, "-d", fmt.Sprintf("tcp.port==%d,kafka", port),
		"-Y", "kafka.api_key == 1 && kafka.request_frame", "-T", "json", "--no-duplicate-keys").Output()
	if err != nil {
		t.Fatalf("tshark -T json: %v", err)
	}
	var pkts []struct {
		Source struct {
			Layers map[string]json.RawMessage `json:"layers"`
		} `json:"_source"`
	}
	if err := json.Unmarshal(out, &pkts); err != nil {
		t.Fatal(err)
	}
	num := func(v any) int64 {
		s, _ := v.(string)
		n, _ := strconv.ParseInt(s, 10, 64)
		return n
	}
	var res []tsharkFetch
	for _, p := range pkts {
		var k map[string]any
		// A frame holding several Kafka PDUs yields an array.
		raw := p.Source.Layers["kafka"]
		var many []map[string]any
		if json.Unmarshal(raw, &many) != nil {
			if err := json.Unmarshal(raw, &k); err != nil {
				t.Fatal(err)
			}
			many = []map[string]any{k}
		}
		for _, k := range many {
			corr := num(k["kafka.correlation_id"])
			for tk, tv := range k {
				topic, ok := tv.(map[string]any)
				if !strings.HasPrefix(tk, "Topic") || !ok {
					continue
				}
				for pk, pv := range topic {
					part, ok := pv.(map[string]any)
					if !strings.HasPrefix(pk, "Partition") || !ok {
						continue
					}
					f := tsharkFetch{corr: corr, hwm: num(part["kafka.offset"]), lso: num(part["kafka.last_stable_offset"])}
					if at, ok := part["Aborted Transactions"].(map[string]any); ok {
						var txs []any
						switch v := at["Transaction"].(type) {
						case []any:
							txs = v
						case map[string]any:
							txs = []any{v}
						}
						for _, tx := range txs {
							m := tx.(map[string]any)
							f.aborted = append(f.aborted, txnindex.AbortedTransaction{ProducerID: txnindex.ProducerID(num(m["kafka.producer_id"])), FirstOffset: num(m["kafka.first_offset"])})
						}
					}
					res = append(res, f)
				}
			}
		}
	}
	return res
}

// TestCaptureOfKcat captures, with tshark, kcat consuming read_committed from
// a kfake broker over loopback, and checks that the capture decodes to what
// tshark's dissector reports (LSO, high watermark, aborted lists) and that
// replaying the captured responses delivers exactly the offsets kcat
// printed.
func TestCaptureOfKcat(t *testing.T) {
	tshark := testtool.Need(t, "tshark")
	path, port, printed := testtool.KcatCapture(t, 200)

	capt, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(capt.Problems) > 0 {
		t.Errorf("problems: %v", capt.Problems)
	}
	var fetches []txnindex.CapturedFetch
	var ours []tsharkFetch
	sawAborted := false
	for _, f := range capt.Fetches {
		if f.Topic != "txns" || f.Isolation != txnindex.ReadCommitted {
			continue
		}
		fetches = append(fetches, txnindex.CapturedFetch{Offset: f.FetchOffset, Response: f.Response()})
		ours = append(ours, tsharkFetch{corr: int64(f.CorrelationID), hwm: f.HighWatermark, lso: f.LastStableOffset, aborted: f.Aborted})
		sawAborted = sawAborted || len(f.Aborted) > 0
	}
	if len(fetches) < 2 || !sawAborted {
		t.Fatalf("%d read_committed fetches, aborted list seen %v: the capture does not exercise the filter", len(fetches), sawAborted)
	}
	theirs := tsharkFetches(t, tshark, path, port)
	slices.SortFunc(theirs, func(a, b tsharkFetch) int { return int(a.corr - b.corr) })
	slices.SortFunc(ours, func(a, b tsharkFetch) int { return int(a.corr - b.corr) })
	if len(theirs) != len(ours) {
		t.Fatalf("tshark saw %d fetch partitions, we decoded %d", len(theirs), len(ours))
	}
	for i := range ours {
		o, w := ours[i], theirs[i]
		if o.corr != w.corr || o.hwm != w.hwm || o.lso != w.lso || !slices.Equal(o.aborted, w.aborted) {
			t.Errorf("fetch %d: ours %+v, tshark %+v", i, o, w)
		}
	}

	var delivered []int64
	for d := range txnindex.Replay(fetches, txnindex.ReadCommitted, txnindex.VariantLibrdkafka, nil) {
		if d.Verdict == txnindex.Delivered {
			for o := d.From; o <= d.To; o++ {
				delivered = append(delivered, o)
			}
		}
	}
	if !slices.Equal(delivered, printed) {
		t.Errorf("replay delivers %v\nkcat printed   %v", delivered, printed)
	}
	t.Logf("%d packets, %d exchanges, %d read_committed fetches; kcat printed %d offsets", capt.Packets, capt.Exchanges, len(fetches), len(printed))
}
