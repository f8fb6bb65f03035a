package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// recovered reports a problem that only a recovered panic produces: the
// guard's checks or the decoders missed a shape.
func recovered(c *Capture) error {
	for _, p := range c.Problems {
		for _, m := range []string{"the packet reader failed", "TCP reassembly failed", "decoding this connection failed"} {
			if strings.Contains(p.Error(), m) {
				return p
			}
		}
	}
	return nil
}

// FuzzRead: any bytes decode without panicking, in pcapgo or in our own
// decoders. Seeds: the real captures and the hostile shapes
// (testdata/hostile: if_tsresol, giant and zero lengths, lossy Fetch
// conversations).
func FuzzRead(f *testing.F) {
	seeds := realCaptures(f)
	hostile, _ := filepath.Glob(filepath.Join(hostileDir, "*"))
	for _, p := range append(seeds, hostile...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// With the size known (files, uploads) and unknown (a pipe).
		for _, r := range []io.Reader{bytes.NewReader(b), struct{ io.Reader }{bytes.NewReader(b)}} {
			c, err := Read(r, "fuzz")
			if err != nil {
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("not positional: %v", err)
				}
				continue
			}
			if e := recovered(c); e != nil {
				t.Fatal(e)
			}
			_ = c.NoFetch()
		}
	})
}

// FuzzConn runs the framing and the Kafka decoding on a connection built
// from two byte streams with a gap cut into each, as tcpassembly delivers
// a lossy capture. Seeds: the streams of the lossy conversations.
func FuzzConn(f *testing.F) {
	for _, version := range []int16{11, 13} {
		lc := newLossyConv(f, version)
		var c2s, s2c []byte
		for i, p := range lc.pkts {
			payload := gopacket.NewPacket(p, layers.LayerTypeEthernet, gopacket.Default).TransportLayer().LayerPayload()
			if lc.fromClient[i] {
				c2s = append(c2s, payload...)
			} else {
				s2c = append(s2c, payload...)
			}
		}
		mid := uint32(lc.streamOff[lc.respSeg[0][len(lc.respSeg[0])/2]])
		f.Add(c2s, s2c, uint32(0), uint32(0), mid, uint32(1000), true)
		f.Add(c2s, s2c, uint32(0), uint32(0), uint32(lc.respOff[1]), uint32(1000), true)
		f.Add(c2s, s2c, uint32(30), uint32(7), uint32(lc.respOff[1])+3, uint32(50), false)
	}
	f.Fuzz(func(t *testing.T, c2s, s2c []byte, cgap, clen, sgap, slen uint32, syn bool) {
		c := &Capture{Name: "fuzz", ids: map[[16]byte]string{}, apis: map[string]int{}}
		conn := &Conn{Client: "c:1", Server: "s:2", c2s: lossyDirection(c2s, cgap, clen, syn), s2c: lossyDirection(s2c, sgap, slen, syn)}
		decodeConn(c, conn)
		if e := recovered(c); e != nil {
			t.Fatal(e)
		}
		for _, fe := range c.Fetches {
			if int64(fe.RecordBytes) > int64(len(s2c)) {
				t.Fatalf("a fetch holds %d record bytes of a %d-byte stream", fe.RecordBytes, len(s2c))
			}
		}
	})
}

// lossyDirection delivers b as tcpassembly would with n bytes from gap on
// not captured.
func lossyDirection(b []byte, gap, n uint32, syn bool) *direction {
	d := &direction{src: "x", dst: "y", syn: syn}
	t := time.Unix(1700000000, 0)
	g, e := min(int(gap), len(b)), min(int(gap)+int(n), len(b))
	d.add(b[:g], 0, t)
	if e > g {
		d.add(b[e:], e-g, t)
	} else {
		d.add(b[g:], 0, t)
	}
	return d
}

// FuzzFetchPrefix: fetchPrefix on a Fetch response cut anywhere returns,
// whole, exactly the partitions kmsg decodes from the whole response, and
// of the partition the cut falls in, a prefix of its record set.
func FuzzFetchPrefix(f *testing.F) {
	for _, version := range []int16{4, 7, 11, 12, 13, 16} {
		_, resp := fetchExchange(version, 0, append(batch(0, 3, 10), batch(3, 2, 10)...))
		r := resp.(*kmsg.FetchResponse)
		r.Topics[0].Partitions = append(r.Topics[0].Partitions, r.Topics[0].Partitions[0])
		r.Topics[0].Partitions[1].Partition = 1
		a := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		a.ProducerID, a.FirstOffset = 7, 1
		r.Topics[0].Partitions[1].AbortedTransactions = append(r.Topics[0].Partitions[1].AbortedTransactions, a)
		body := r.AppendTo(nil)
		f.Add(body, version, uint32(len(body)/2))
		f.Add(body, version, uint32(len(body)))
	}
	f.Fuzz(func(t *testing.T, body []byte, version int16, cut uint32) {
		version = min(max(version, 0), 17)
		full := kmsg.NewPtrFetchResponse()
		full.Version = version
		fullOK := full.ReadFrom(body) == nil
		cut = min(cut, uint32(len(body)))
		got, want := fetchPrefix(body[:cut], version)
		if !fullOK {
			return
		}
		var whole, all []kmsg.FetchResponseTopicPartition
		for _, t := range full.Topics {
			all = append(all, t.Partitions...)
		}
		for _, t := range got.Topics {
			whole = append(whole, t.Partitions...)
		}
		if want >= 0 {
			last := whole[len(whole)-1]
			whole = whole[:len(whole)-1]
			if len(whole) >= len(all) {
				t.Fatalf("the cut partition is past the %d partitions", len(all))
			}
			if w := all[len(whole)].RecordBatches; len(w) != want || !bytes.HasPrefix(w, last.RecordBatches) {
				t.Fatalf("cut records: want %d, the whole set has %d, and %d bytes kept are not its prefix", want, len(w), len(last.RecordBatches))
			}
		}
		if len(whole) > len(all) {
			t.Fatalf("%d whole partitions, the response has %d", len(whole), len(all))
		}
		for i := range whole {
			a, b := whole[i], all[i]
			a.UnknownTags, b.UnknownTags = kmsg.Tags{}, kmsg.Tags{}
			a.DivergingEpoch, b.DivergingEpoch = kmsg.FetchResponseTopicPartitionDivergingEpoch{}, kmsg.FetchResponseTopicPartitionDivergingEpoch{}
			a.CurrentLeader, b.CurrentLeader = kmsg.FetchResponseTopicPartitionCurrentLeader{}, kmsg.FetchResponseTopicPartitionCurrentLeader{}
			a.SnapshotID, b.SnapshotID = kmsg.FetchResponseTopicPartitionSnapshotID{}, kmsg.FetchResponseTopicPartitionSnapshotID{}
			for k := range b.AbortedTransactions {
				b.AbortedTransactions[k].UnknownTags = kmsg.Tags{}
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("partition %d:\n got %+v\nwant %+v", i, a, b)
			}
		}
	})
}
