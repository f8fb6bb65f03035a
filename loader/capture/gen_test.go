package capture

// Builders of capture files for the tests: pcap and pcapng written byte by
// byte (to make hostile shapes pcapgo's writers refuse), TCP packets
// serialised by gopacket, and Kafka frames encoded by kmsg.

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"net"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ngBlock is a pcapng block of type typ around body (padded to 4 bytes).
func ngBlock(o binary.AppendByteOrder, typ uint32, body []byte) []byte {
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	total := uint32(12 + len(body))
	b := o.AppendUint32(nil, typ)
	b = o.AppendUint32(b, total)
	b = append(b, body...)
	return o.AppendUint32(b, total)
}

func ngSHBlock(o binary.AppendByteOrder) []byte {
	body := o.AppendUint32(nil, 0x1A2B3C4D)
	body = o.AppendUint16(body, 1)
	body = o.AppendUint16(body, 0)
	body = o.AppendUint64(body, ^uint64(0)) // section length unknown
	return ngBlock(o, ngSHB, body)
}

// ngOption is one option, padded; ngIDBlock appends opt_endofopt.
func ngOption(o binary.AppendByteOrder, code uint16, v []byte) []byte {
	b := o.AppendUint16(nil, code)
	b = o.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func ngIDBlock(o binary.AppendByteOrder, snaplen uint32, opts ...[]byte) []byte {
	body := o.AppendUint16(nil, uint16(layers.LinkTypeEthernet))
	body = o.AppendUint16(body, 0)
	body = o.AppendUint32(body, snaplen)
	for _, op := range opts {
		body = append(body, op...)
	}
	if len(opts) > 0 {
		body = append(body, 0, 0, 0, 0)
	}
	return ngBlock(o, ngIDB, body)
}

// ngEPBlock is an enhanced packet block; caplen is len(data) unless set.
func ngEPBlock(o binary.AppendByteOrder, iface uint32, ts uint64, data []byte, caplen ...uint32) []byte {
	c := uint32(len(data))
	if len(caplen) > 0 {
		c = caplen[0]
	}
	body := o.AppendUint32(nil, iface)
	body = o.AppendUint32(body, uint32(ts>>32))
	body = o.AppendUint32(body, uint32(ts))
	body = o.AppendUint32(body, c)
	body = o.AppendUint32(body, uint32(len(data)))
	body = append(body, data...)
	return ngBlock(o, ngEPB, body)
}

func pcapHeader(snaplen uint32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0xa1b2c3d4)
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 4)
	b = append(b, make([]byte, 8)...)
	b = binary.LittleEndian.AppendUint32(b, snaplen)
	return binary.LittleEndian.AppendUint32(b, uint32(layers.LinkTypeEthernet))
}

func pcapRecord(caplen, origlen uint32, data []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 1700000000)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, caplen)
	b = binary.LittleEndian.AppendUint32(b, origlen)
	return append(b, data...)
}

// conv is a TCP conversation between a client and a broker, as Ethernet
// frames; segments are numbered in pkts.
type conv struct {
	t          testing.TB
	cli, srv   net.IP
	cport      uint16
	cseq, sseq uint32
	now        time.Time
	pkts       [][]byte
	times      []time.Time
	// per segment: which direction, its first stream byte, its length
	fromClient []bool
	streamOff  []int64
	sent       [2]int64 // stream bytes sent so far: client, server
}

func newConv(t testing.TB) *conv {
	c := &conv{t: t, cli: net.IPv4(10, 0, 0, 1).To4(), srv: net.IPv4(10, 0, 0, 2).To4(), cport: 40000,
		cseq: 1000, sseq: 900000, now: time.Unix(1700000000, 0)}
	c.segment(true, nil, true, false, false)
	c.segment(false, nil, true, true, false)
	c.segment(true, nil, false, true, false)
	return c
}

func (c *conv) client() string { return "10.0.0.1:40000" }
func (c *conv) server() string { return "10.0.0.2:9092" }

func (c *conv) segment(fromClient bool, payload []byte, syn, ack, fin bool) {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: c.cli, DstIP: c.srv}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(c.cport), DstPort: 9092, Seq: c.cseq, Ack: c.sseq, SYN: syn, ACK: ack, FIN: fin, PSH: len(payload) > 0, Window: 65535}
	if !fromClient {
		eth.SrcMAC, eth.DstMAC = eth.DstMAC, eth.SrcMAC
		ip.SrcIP, ip.DstIP = c.srv, c.cli
		tcp.SrcPort, tcp.DstPort = 9092, layers.TCPPort(c.cport)
		tcp.Seq, tcp.Ack = c.sseq, c.cseq
	}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		c.t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		c.t.Fatal(err)
	}
	side := 0
	if !fromClient {
		side = 1
	}
	c.pkts = append(c.pkts, append([]byte(nil), buf.Bytes()...))
	c.times = append(c.times, c.now)
	c.fromClient = append(c.fromClient, fromClient)
	c.streamOff = append(c.streamOff, c.sent[side])
	c.now = c.now.Add(time.Millisecond)
	n := uint32(len(payload))
	if syn || fin {
		n = 1
	}
	if fromClient {
		c.cseq += n
	} else {
		c.sseq += n
	}
	c.sent[side] += int64(len(payload))
}

// send writes b in segments of at most mss bytes and returns their
// indices in pkts.
func (c *conv) send(fromClient bool, b []byte, mss int) []int {
	var idx []int
	for len(b) > 0 {
		n := min(mss, len(b))
		idx = append(idx, len(c.pkts))
		c.segment(fromClient, b[:n], false, true, false)
		b = b[n:]
	}
	return idx
}

// close sends a FIN from each side, the client first.
func (c *conv) close() {
	c.segment(true, nil, false, true, true)
	c.segment(false, nil, false, true, true)
}

// pcap writes the conversation with pcapgo, leaving out the packets in drop.
func (c *conv) pcap(drop ...int) []byte {
	var out bytes.Buffer
	w := pcapgo.NewWriter(&out)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		c.t.Fatal(err)
	}
	skip := map[int]bool{}
	for _, d := range drop {
		skip[d] = true
	}
	for i, p := range c.pkts {
		if skip[i] {
			continue
		}
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: c.times[i], CaptureLength: len(p), Length: len(p)}, p); err != nil {
			c.t.Fatal(err)
		}
	}
	return out.Bytes()
}

// requestFrame is a Kafka request with header v1 (v2 when flexible).
func requestFrame(req kmsg.Request, corr int32) []byte {
	b := []byte{0, 0, 0, 0}
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 4)
	b = append(b, "test"...)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func responseFrame(resp kmsg.Response, corr int32) []byte {
	b := binary.BigEndian.AppendUint32([]byte{0, 0, 0, 0}, uint32(corr))
	if resp.IsFlexible() {
		b = append(b, 0)
	}
	b = resp.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batch is a v2 record batch of n records of vlen-byte values from base.
func batch(base int64, n, vlen int) []byte {
	var recs []byte
	for i := range n {
		r := kmsg.Record{OffsetDelta: int32(i), Value: bytes.Repeat([]byte{byte('a' + i%26)}, vlen)}
		r.Length = int32(len(r.AppendTo(nil)) - 1) // the bytes after a 1-byte zero Length
		recs = r.AppendTo(recs)
	}
	rb := kmsg.RecordBatch{FirstOffset: base, Magic: 2, LastOffsetDelta: int32(n - 1), FirstTimestamp: 1700000000000,
		MaxTimestamp: 1700000000000, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(n), Records: recs}
	b := rb.AppendTo(nil)
	rb.Length = int32(len(b) - 12)
	b = rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
	return b
}

// fetchExchange is a Fetch request for partition 0 of topic "t" (by id
// from v13) at offset, and its response holding records.
func fetchExchange(version int16, offset int64, records []byte) (kmsg.Request, kmsg.Response) {
	id := [16]byte{1, 2, 3}
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.IsolationLevel, req.MaxBytes, req.SessionEpoch = version, 1, 50<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "t", id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = offset, 50<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.Version = version
	st := kmsg.NewFetchResponseTopic()
	st.Topic, st.TopicID = "t", id
	sp := kmsg.NewFetchResponseTopicPartition()
	sp.HighWatermark, sp.LastStableOffset, sp.RecordBatches = 1000, 1000, records
	sp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
	st.Partitions = append(st.Partitions, sp)
	resp.Topics = append(resp.Topics, st)
	return req, resp
}
