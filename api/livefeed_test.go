package api

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/txnscope/txnscope/live"
)

// TestLiveFeed: updates reach subscribers as one pending wake-up however
// many arrive, an unchanged window keeps its log (no new generation for
// the browsers), a transient error keeps the views, the notes are bounded,
// and a fatal error is the last state.
func TestLiveFeed(t *testing.T) {
	f := NewLiveFeed("b:9092", "t")
	l1, l2 := small(), small()
	view := live.PartitionView{Partition: 3, WindowStart: 0, WindowEnd: 20, Batches: 11, HighWatermark: 20, EngineLSO: 17, Log: l1,
		Open: []live.OpenTxn{{ProducerID: 1 << 60, FirstOffset: 17, Hanging: true}}}
	f.Apply(live.Update{Seq: 1, Time: time.UnixMilli(1000), Partitions: []live.PartitionView{view}})
	lp := f.Partition(3)
	if lp == nil || f.Partition(4) != nil || lp.Log() != l1 {
		t.Fatalf("partition 3: %v", lp)
	}
	ch, cancel := lp.Subscribe()
	defer cancel()

	// Same window, same HWM: the new poll's log is dropped for the old.
	view.Log = l2
	for seq := 2; seq <= 3; seq++ {
		f.Apply(live.Update{Seq: seq, Partitions: []live.PartitionView{view}, Notes: []string{fmt.Sprint("note ", seq)}})
	}
	if lp.Log() != l1 {
		t.Error("an unchanged window got a new log")
	}
	select {
	case <-ch:
	default:
		t.Fatal("no wake-up")
	}
	select {
	case <-ch:
		t.Fatal("two updates woke the subscriber twice: they should coalesce")
	default:
	}
	// A moved window is a new log.
	view.WindowEnd, view.Batches = 22, 12
	f.Apply(live.Update{Seq: 4, Partitions: []live.PartitionView{view}})
	if lp.Log() != l2 {
		t.Error("a changed window kept the old log")
	}

	f.Apply(live.Update{Seq: 5, Err: "connection refused", RetryIn: 2 * time.Second})
	st := lp.Status()
	if st.State != LiveReconnecting || st.RetryInMs != 2000 || st.Seq != 5 || st.Partition != 3 || st.Bootstrap != "b:9092" ||
		st.EngineLSO != 17 || len(st.Open) != 1 || st.Open[0].ProducerID != 1<<60 || !st.Open[0].Hanging || len(st.Notes) != 2 {
		t.Errorf("reconnecting: %+v", st)
	}
	for i := range 2 * maxLiveNotes {
		f.Apply(live.Update{Seq: 6 + i, Partitions: []live.PartitionView{view}, Notes: []string{fmt.Sprint("n", i)}})
	}
	if st := lp.Status(); st.State != LiveConnected || len(st.Notes) != maxLiveNotes || st.Notes[maxLiveNotes-1] != fmt.Sprint("n", 2*maxLiveNotes-1) {
		t.Errorf("notes: %d, last %q", len(st.Notes), st.Notes[len(st.Notes)-1])
	}

	cancel()
	<-ch // drain the pending wake-up
	f.Fail(errors.New("TOPIC_AUTHORIZATION_FAILED"))
	select {
	case <-ch:
		t.Error("woken after the subscription ended")
	default:
	}
	if st := lp.Status(); st.State != LiveError || st.Error != "TOPIC_AUTHORIZATION_FAILED" || lp.Log() != l2 {
		t.Errorf("failed: %+v", st)
	}
}
