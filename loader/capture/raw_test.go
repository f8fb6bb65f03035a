package capture

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

func rawFetchExchange(corr int32, offset int64, aborted bool) RawExchange {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.IsolationLevel = 11, 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = offset, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	st := kmsg.NewFetchResponseTopic()
	st.Topic = "t"
	sp := kmsg.NewFetchResponseTopicPartition()
	sp.HighWatermark, sp.LastStableOffset = 10, 8
	if aborted {
		a := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		a.ProducerID, a.FirstOffset = 7, 2
		sp.AbortedTransactions = append(sp.AbortedTransactions, a)
	}
	st.Partitions = append(st.Partitions, sp)
	resp.Topics = append(resp.Topics, st)
	return RawExchange{Time: time.Unix(1700000000, 0), APIKey: 1, APIVersion: 11, CorrelationID: corr,
		Connection: "c1", Request: req.AppendTo(nil), Response: resp.AppendTo(nil)}
}

func TestRawRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewRawWriter(&buf)
	for i, e := range []RawExchange{rawFetchExchange(1, 0, true), rawFetchExchange(2, 5, false)} {
		if err := w.Write(e); err != nil {
			t.Fatal(i, err)
		}
	}
	w.Flush()
	c, err := ReadRaw(bytes.NewReader(buf.Bytes()), "rt.raw")
	if err != nil || len(c.Problems) != 0 {
		t.Fatal(err, c.Problems)
	}
	if len(c.Fetches) != 2 {
		t.Fatalf("%d fetches", len(c.Fetches))
	}
	f := c.Fetches[0]
	if f.FetchOffset != 0 || f.LastStableOffset != 8 || f.HighWatermark != 10 || f.Isolation != txnindex.ReadCommitted ||
		len(f.Aborted) != 1 || f.Aborted[0] != (txnindex.AbortedTransaction{ProducerID: 7, FirstOffset: 2}) {
		t.Errorf("fetch 0: %+v", f)
	}
	// kmsg keeps a null list apart from an empty one; an absent list is null.
	if c.Fetches[1].FetchOffset != 5 || c.Fetches[1].Aborted != nil {
		t.Errorf("fetch 1: %+v", c.Fetches[1])
	}

	// A truncated last record keeps the first and names the byte position.
	cut := buf.Bytes()[:buf.Len()-10]
	c, err = ReadRaw(bytes.NewReader(cut), "cut.raw")
	if err != nil || len(c.Fetches) != 1 || len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Error(), "capture: cut.raw: byte 0x") {
		t.Fatalf("truncated: %v %d %v", err, len(c.Fetches), c.Problems)
	}
	if _, err := ReadRaw(strings.NewReader("NOTACAPTURE"), "x"); err == nil || !strings.Contains(err.Error(), "not a raw capture") {
		t.Errorf("bad magic: %v", err)
	}
}

// FuzzReadRaw: any bytes decode without panicking or allocating beyond
// the record bound.
func FuzzReadRaw(f *testing.F) {
	var buf bytes.Buffer
	w := NewRawWriter(&buf)
	w.Write(rawFetchExchange(1, 0, true))
	w.Flush()
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		ReadRaw(bytes.NewReader(b), "fuzz")
	})
}
