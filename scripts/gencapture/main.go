// Command gencapture writes a pcapng of a read_committed consumer's Fetch
// traffic, for the capture benchmark (docs/benchmarks-capture.md) and for
// trying txnscope on a capture of realistic size.
//
// Everything in it is real: a kfake broker listens on a free loopback
// port, two transactional kgo producers fill partition 0 of topic "txns"
// with interleaved transactions (one in eight aborted) and an idempotent
// producer adds batches between them; then tshark (dumpcap, so root or the
// capture capability is needed) captures the loopback interface while a
// kgo consumer with FetchIsolationLevel(ReadCommitted) reads the partition
// from the start to its end. Loopback's 64 KiB MTU makes the packets
// 64 KiB, as on a broker host.
//
//	go run ./scripts/gencapture -out /tmp/c.pcapng -batches 10274 -value-bytes 1150
//
// The broker listens on 9092 unless -port says otherwise, so that
// `tshark -r F -Y kafka` decodes the capture without a -d option.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	out := flag.String("out", "", "pcapng file to write")
	batches := flag.Int("batches", 10000, "data batches to produce")
	records := flag.Int("records", 12, "records per batch")
	value := flag.Int("value-bytes", 1000, "bytes of each record's value (random, so incompressible)")
	port := flag.Int("port", 9092, "loopback port of the broker: 9092, Kafka's, is where tshark's dissector looks (0: any free port)")
	flag.Parse()
	if *out == "" {
		log.Fatal("gencapture: -out is required")
	}
	if err := run(*out, *port, *batches, *records, *value); err != nil {
		log.Fatal("gencapture: ", err)
	}
}

func run(out string, port, batches, records, value int) error {
	var err error
	if port == 0 {
		if port, err = freePort(); err != nil {
			return err
		}
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		return err
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	n, err := produce(addr, batches, records, value)
	if err != nil {
		return err
	}
	stop, err := startCapture(port, out)
	if err != nil {
		return err
	}
	got, err := consume(addr)
	stop()
	if err != nil {
		return err
	}
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d bytes; %d batches produced (markers included), %d records consumed read_committed\n", out, st.Size(), n, got)
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// produce writes the data batches: each ProduceSync call of records
// records is one batch. It returns the batches written, the transaction
// markers included.
func produce(addr string, batches, records, value int) (int, error) {
	ctx := context.Background()
	mk := func(opts ...kgo.Opt) (*kgo.Client, error) {
		return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("txns"),
			kgo.AllowAutoTopicCreation(), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression())}, opts...)...)
	}
	var cls [3]*kgo.Client
	for i, o := range [][]kgo.Opt{{kgo.TransactionalID("a")}, {kgo.TransactionalID("b")}, nil} {
		cl, err := mk(o...)
		if err != nil {
			return 0, err
		}
		defer cl.Close()
		cls[i] = cl
	}
	batch := func(cl *kgo.Client) error {
		rs := make([]*kgo.Record, records)
		for i := range rs {
			v := make([]byte, value)
			rand.Read(v)
			rs[i] = &kgo.Record{Value: v}
		}
		return cl.ProduceSync(ctx, rs...).FirstErr()
	}
	const perTxn = 5
	written, txn := 0, 0
	for written < batches {
		// Transactions of a and b overlap: a begins, b begins, a ends, b ends.
		a, b := cls[0], cls[1]
		if err := a.BeginTransaction(); err != nil {
			return written, err
		}
		if err := b.BeginTransaction(); err != nil {
			return written, err
		}
		for i := 0; i < perTxn && written < batches; i++ {
			if err := batch(a); err != nil {
				return written, err
			}
			if err := batch(b); err != nil {
				return written, err
			}
			written += 2
		}
		txn++
		commitA := kgo.TryCommit
		if txn%8 == 0 {
			commitA = kgo.TryAbort
		}
		if err := a.EndTransaction(ctx, commitA); err != nil {
			return written, err
		}
		if written < batches {
			if err := batch(cls[2]); err != nil {
				return written, err
			}
			written++
		}
		if err := b.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return written, err
		}
		written += 2 // the two markers
	}
	return written, nil
}

// consume reads partition 0 read_committed from the start until a fetch
// finds nothing more, and returns the records it was given.
func consume(addr string) (int, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"txns": {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	got, idle := 0, 0
	for idle < 3 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		if err := fs.Err0(); err != nil && err != context.DeadlineExceeded {
			return got, err
		}
		n := fs.NumRecords()
		got += n
		if n == 0 {
			idle++
		}
	}
	return got, nil
}

// startCapture runs tshark on loopback for TCP port port into path and
// returns once it is capturing. The buffer is 256 MiB: a 1 MiB Fetch
// response crosses loopback at once and dumpcap, descheduled on a busy
// machine, would otherwise drop segments.
func startCapture(port int, path string) (stop func(), err error) {
	cmd := exec.Command("tshark", "-i", "lo", "-B", "256", "-f", "tcp port "+strconv.Itoa(port), "-w", path)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	seen, buf := "", make([]byte, 4096)
	for !strings.Contains(seen, "Capturing on") {
		n, err := stderr.Read(buf)
		if err != nil {
			cmd.Process.Kill()
			return nil, fmt.Errorf("tshark: %v: %s", err, seen)
		}
		seen += string(buf[:n])
	}
	go io.Copy(os.Stderr, stderr)
	// dumpcap reports before its socket sees packets; without this wait
	// the first fetches, the handshake and the Metadata exchange that names
	// the topic were missing from the file.
	time.Sleep(2 * time.Second)
	return func() {
		time.Sleep(500 * time.Millisecond)
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}, nil
}
