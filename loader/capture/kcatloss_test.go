package capture

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/testtool"
)

// TestLossyKcatCapture is the lossy capture made on purpose: tshark
// captures kcat reading 1.5 MB from a kfake broker over loopback, so that
// its first Fetch response is about 1 MB in segments of up to 64 KB; editcap
// then deletes a segment from the middle of that response (tshark on the
// result: "previous segment not captured"). The capture used to yield no
// Fetch at all. Now the response's batches before the gap are decoded (CRC
// checked, and each an offset kcat printed), the gap is reported with its
// stream and byte, and the fetches after it are decoded.
func TestLossyKcatCapture(t *testing.T) {
	tshark := testtool.Need(t, "tshark")
	kcat := testtool.Need(t, "kcat")
	editcap := testtool.Need(t, "editcap")
	addr, port := testtool.CaptureBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("big"), kgo.AllowAutoTopicCreation(),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	value := strings.Repeat("v", 1000)
	for range 150 {
		recs := make([]*kgo.Record, 10)
		for i := range recs {
			recs[i] = &kgo.Record{Value: []byte(value)}
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()

	dir := t.TempDir()
	full := filepath.Join(dir, "kcat.pcapng")
	// The capture must hold every segment but the one dropped below: on a
	// loaded machine dumpcap itself can miss segments of kcat's bursts on
	// loopback (then the stream is cut where this test did not cut it), so
	// a capture tshark finds lossy is made again, up to three times.
	var out []byte
	for attempt := 1; ; attempt++ {
		stop := testtool.StartCapture(t, port, full)
		out, err = exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", "big", "-p", "0", "-o", "beginning", "-e", "-q",
			"-f", "%o\n", "-X", "fetch.message.max.bytes=1048576").Output()
		stop()
		if err != nil {
			t.Fatalf("kcat: %v", err)
		}
		lost, err := exec.Command(tshark, "-r", full, "-Y", "tcp.analysis.lost_segment", "-T", "fields", "-e", "frame.number").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		if len(strings.TrimSpace(string(lost))) == 0 {
			break
		}
		if attempt == 3 {
			t.Fatalf("dumpcap lost segments of kcat's fetches in 3 captures in a row (frames %s of the last): the machine is too loaded to capture loopback", strings.Fields(string(lost)))
		}
		t.Logf("capture %d lost segments (frames %s): capturing again", attempt, strings.Fields(string(lost)))
	}
	printed := map[int64]bool{}
	for _, o := range testtool.KcatOffsets(t, out) {
		printed[o] = true
	}
	if len(printed) != 1500 {
		t.Fatalf("kcat printed %d offsets, want 1500", len(printed))
	}

	// The broker's data segments: frame, connection, relative sequence
	// number (1 is the first byte after the SYN), length.
	fields, err := exec.Command(tshark, "-r", full, "-Y", fmt.Sprintf("tcp.srcport == %d && tcp.len > 0", port),
		"-T", "fields", "-e", "frame.number", "-e", "tcp.stream", "-e", "tcp.seq", "-e", "tcp.len", "-e", "tcp.dstport").Output()
	if err != nil {
		t.Fatal(err)
	}
	type seg struct{ frame, stream, seq, n, cport int64 }
	var segs []seg
	bytesOf := map[int64]int64{}
	for _, l := range strings.Split(strings.TrimSpace(string(fields)), "\n") {
		var s seg
		if _, err := fmt.Sscan(l, &s.frame, &s.stream, &s.seq, &s.n, &s.cport); err != nil {
			t.Fatalf("tshark line %q: %v", l, err)
		}
		segs = append(segs, s)
		bytesOf[s.stream] += s.n
	}
	var fetchConn int64
	for st, n := range bytesOf {
		if n > bytesOf[fetchConn] {
			fetchConn = st
		}
	}
	// The first segment past 300 KB of the fetch connection's responses:
	// inside the first, 1 MB one.
	i := slices.IndexFunc(segs, func(s seg) bool { return s.stream == fetchConn && s.seq-1 >= 300_000 })
	if i < 0 || segs[i].seq-1 > 900_000 {
		t.Fatalf("no segment to drop in the first response: %+v", segs)
	}
	drop := segs[i]
	lossy := filepath.Join(dir, "lossy.pcapng")
	if out, err := exec.Command(editcap, full, lossy, strconv.FormatInt(drop.frame, 10)).CombinedOutput(); err != nil {
		t.Fatalf("editcap: %v: %s", err, out)
	}
	lost, err := exec.Command(tshark, "-r", lossy, "-Y", "tcp.analysis.lost_segment", "-T", "fields", "-e", "frame.number").Output()
	if err != nil || len(strings.TrimSpace(string(lost))) == 0 {
		t.Fatalf("tshark sees no lost segment in the edited capture (%v)", err)
	}

	c, err := Open(lossy)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.NoFetch(); err != nil {
		t.Fatal(err)
	}
	where := fmt.Sprintf("127.0.0.1:%d->127.0.0.1:%d", port, drop.cport)
	gap := drop.seq - 1
	// dumpcap itself may lose segments of such bursts on loopback (the
	// capture of the issue did): the gap reported may be wider.
	covered := false
	for _, p := range c.Problems {
		var fe *FormatError
		var from, to, n int64
		if errors.As(p, &fe) && fe.Where == where {
			if _, err := fmt.Sscanf(fe.Msg, "TCP segments not captured: stream bytes %v..%v (%d bytes) missing", &from, &to, &n); err == nil {
				covered = covered || fe.Offset == from && from <= gap && to >= gap+drop.n-1 && n == to-from+1
			}
		}
	}
	if !covered {
		t.Errorf("the gap at %s byte %#x is not reported: %v", where, gap, c.Problems)
	}
	var cut, after *Fetch
	for _, f := range c.Fetches {
		for _, b := range f.Batches {
			for o := b.BaseOffset; o <= b.LastOffset(); o++ {
				if !printed[o] {
					t.Errorf("fetch corr %d: offset %d decoded, kcat did not print it", f.CorrelationID, o)
				}
			}
		}
		switch {
		case f.Incomplete && cut == nil:
			cut = f
		case cut != nil && len(f.Batches) > 0 && after == nil:
			after = f
		}
	}
	if cut == nil || len(cut.Batches) == 0 || cut.Batches[0].BaseOffset != cut.FetchOffset {
		t.Fatalf("no incomplete fetch starting at its fetch offset with batches: %+v", c.Fetches)
	}
	if after == nil || after.FetchOffset <= cut.Batches[len(cut.Batches)-1].LastOffset() {
		t.Fatalf("no fetch decoded after the gap: %v", c.Problems)
	}
	t.Logf("%d packets; dropped frame %d (%d bytes at %s byte %#x); fetch corr %d kept %d batches (offsets %d..%d) of %d record bytes; next fetch from %d: %d batches",
		c.Packets, drop.frame, drop.n, where, gap, cut.CorrelationID, len(cut.Batches), cut.Batches[0].BaseOffset,
		cut.Batches[len(cut.Batches)-1].LastOffset(), cut.RecordBytes, after.FetchOffset, len(after.Batches))
	for _, p := range c.Problems {
		t.Log("  ", p)
	}
}
