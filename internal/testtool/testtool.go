// Package testtool finds the external programs tests drive (kcat, tshark,
// chromium). Outside CI a missing program skips the test; with CI=true it
// fails it, so a green CI run means the real tool ran.
package testtool

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Need returns the path of program name, or skips (fails under CI=true).
func Need(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required (CI=true): %v; run `make deps`", name, err)
	}
	t.Skipf("%s not installed (%v); run `make deps`", name, err)
	return ""
}

// NeedDir is Need for a directory of test inputs.
func NeedDir(t testing.TB, dir string) {
	t.Helper()
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("test input directory %s is required (CI=true)", dir)
	}
	t.Skipf("test input directory %s not present", dir)
}

// StartCapture runs tshark on the loopback interface, capturing TCP port
// port into path, and returns once dumpcap reports that it is capturing
// (anything sent earlier would be missing). The returned function stops
// the capture and waits until the file is complete.
func StartCapture(t testing.TB, port int, path string) (stop func()) {
	t.Helper()
	tshark := Need(t, "tshark")
	// -B 64: a 64 MiB capture buffer instead of dumpcap's 2 MiB. A Fetch
	// response of 1 MB crosses loopback in 64 KB segments at once, and on a
	// loaded machine dumpcap, descheduled, found its buffer full and lost
	// segments the tests did not mean to lose.
	cmd := exec.Command(tshark, "-i", "lo", "-B", "64", "-f", "tcp port "+strconv.Itoa(port), "-w", path)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen, buf := "", make([]byte, 4096)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(seen, "Capturing on") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("tshark did not start: %s", seen)
		}
		n, err := stderr.Read(buf)
		if err != nil {
			t.Fatalf("tshark: %v: %s", err, seen)
		}
		seen += string(buf[:n])
	}
	go io.Copy(io.Discard, stderr)
	// dumpcap reports before its first packet is written; give it a moment
	// so that the connections opened next are captured from their SYN.
	time.Sleep(500 * time.Millisecond)
	return func() {
		time.Sleep(300 * time.Millisecond) // let the last packets reach the file
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// CaptureBroker starts a one-broker kfake cluster on a free loopback port
// (the port StartCapture filters on), creating topics of one partition as
// clients write to them; it is closed at the test's cleanup.
func CaptureBroker(t testing.TB) (addr string, port int) {
	t.Helper()
	port = FreePort(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0], port
}

// KcatOffsets reads what kcat printed with -f '%o\n' (or a format that
// starts each line with the offset): the offsets, in order.
func KcatOffsets(t testing.TB, out []byte) []int64 {
	t.Helper()
	var offs []int64
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		o, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatalf("kcat printed %q", line)
		}
		offs = append(offs, o)
	}
	return offs
}

// WriteTransactions leaves on partition 0 of topic: an aborted and a
// committed transaction of one producer interleaved with another producer's
// committed one, idempotent records between, and a last aborted transaction.
func WriteTransactions(t testing.TB, addr, topic string) {
	t.Helper()
	ctx := context.Background()
	mk := func(opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
			kgo.AllowAutoTopicCreation(), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	a, b, idem := mk(kgo.TransactionalID("a")), mk(kgo.TransactionalID("b")), mk()
	produce := func(cl *kgo.Client, n int) {
		for i := range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	begin := func(cl *kgo.Client) {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
	}
	end := func(cl *kgo.Client, c kgo.TransactionEndTry) {
		if err := cl.EndTransaction(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	produce(idem, 2)
	begin(a)
	produce(a, 3)
	begin(b)
	produce(b, 2)
	end(a, kgo.TryAbort)
	produce(idem, 1)
	end(b, kgo.TryCommit)
	begin(a)
	produce(a, 2)
	end(a, kgo.TryCommit)
	begin(b)
	produce(b, 2)
	end(b, kgo.TryAbort)
	produce(idem, 1)
}

// KcatCapture runs a kfake broker on a free loopback port, captures its
// traffic with tshark while WriteTransactions fills topic "txns" and kcat
// consumes partition 0 read_committed (with fetch.message.max.bytes
// maxBytes, so that it takes several fetches), and returns the capture's
// path, the broker's port and the offsets kcat printed.
func KcatCapture(t testing.TB, maxBytes int) (path string, port int, printed []int64) {
	t.Helper()
	kcat := Need(t, "kcat")
	addr, port := CaptureBroker(t)
	path = filepath.Join(t.TempDir(), "kcat.pcapng")
	stop := StartCapture(t, port, path)
	WriteTransactions(t, addr, "txns")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", "txns", "-p", "0", "-o", "beginning", "-e", "-q",
		"-f", "%o\n", "-X", "isolation.level=read_committed", "-X", fmt.Sprintf("fetch.message.max.bytes=%d", maxBytes)).Output()
	stop()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	return path, port, KcatOffsets(t, out)
}

// RawFetch sends one Fetch for partition 0 of topic (named by id too, since
// kgo negotiates Fetch v13+, which names topics by id) from offset with
// isolation level iso, and returns the partition's response, failing the
// test on a request error, an unexpected shape or an error code.
func RawFetch(t testing.TB, cl *kgo.Client, topic string, id [16]byte, offset int64, iso int8) *kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.IsolationLevel, req.SessionEpoch = -1, 0, 64<<20, iso, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = 0, offset, 64<<20, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch response shape: %+v", resp)
	}
	p := &resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("fetch at %d: error code %d", offset, p.ErrorCode)
	}
	return p
}
