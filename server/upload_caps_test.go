package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/txnindex"
)

// openTxnsSegment is a segment of n transactions, each of one batch of
// one record by its own producer, none ended: n transactions open.
func openTxnsSegment(n int) []byte {
	var seg []byte
	for i := range n {
		seg = append(seg, testfixture.Batch{Base: int64(i), PID: int64(1000 + i), Txn: true, Ctrl: -1, N: 1, TS: 1_767_225_600_000 + int64(i)}.Encode()...)
	}
	return seg
}

// TestUploadOpenTransactionsCapped: an uploaded segment of 100,000 open
// transactions (7.5 MB) is diagnosed with the first txnindex.ListCap in
// detail and the rest counted: GET …/diagnosis (and its limit parameter,
// bounded) and the page stay small. (The answer was 227 MB, the page 118
// MB.)
func TestUploadOpenTransactionsCapped(t *testing.T) {
	const n = 100_000
	seg := openTxnsSegment(n)
	s := startServe(t)
	code, a := upload(t, "http://"+s.addr, "00000000000000000000.log", bytes.NewReader(seg), nil)
	if code != http.StatusCreated || len(a.Partitions) != 1 {
		t.Fatalf("upload: %d %+v", code, a)
	}
	p := a.Partitions[0]
	base := fmt.Sprintf("/api/v1/sources/%s/partitions/%s/%d/diagnosis", a.ID, p.Topic, p.Partition)
	diagnosis := func(query string) (int, int, int, int) {
		t.Helper()
		resp, body := get(t, s.url(base+query))
		var d struct {
			Open  []json.RawMessage `json:"open_transactions"`
			Total int               `json:"open_transactions_total"`
		}
		if resp.StatusCode == http.StatusOK {
			if err := json.Unmarshal([]byte(body), &d); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		}
		return resp.StatusCode, len(body), len(d.Open), d.Total
	}
	status, size, listed, total := diagnosis("")
	t.Logf("%d bytes of segment: the diagnosis answer is %d bytes", len(seg), size)
	if status != http.StatusOK || listed != txnindex.ListCap || total != n {
		t.Fatalf("diagnosis: %d, %d open transactions listed of %d; want 200, %d of %d", status, listed, total, txnindex.ListCap, n)
	}
	if size > 2<<20 {
		t.Errorf("the diagnosis answer is %d bytes: more than 2 MiB", size)
	}
	if status, _, listed, total = diagnosis("?limit=1000"); status != http.StatusOK || listed != 1000 || total != n {
		t.Errorf("limit=1000: %d, %d listed of %d", status, listed, total)
	}
	for _, bad := range []string{"0", "-5", "10001", "many"} {
		if status, _, _, _ = diagnosis("?limit=" + bad); status != http.StatusBadRequest {
			t.Errorf("limit=%s: %d, want 400", bad, status)
		}
	}

	resp, page := get(t, s.url(fmt.Sprintf("/sources/%s/partitions/%s/%d", a.ID, p.Topic, p.Partition)))
	t.Logf("the page is %d bytes", len(page))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("page: %d", resp.StatusCode)
	}
	if want := "… and 99,900 more open transactions"; !strings.Contains(page, want) {
		t.Errorf("the page does not say %q", want)
	}
	if len(page) > 2<<20 {
		t.Errorf("the page is %d bytes: more than 2 MiB", len(page))
	}
}
