package capture

// Builders of capture files for the tests: pcap and pcapng written byte by
// byte (to make hostile shapes pcapgo's writers refuse), and TCP packets
// serialised by gopacket.

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
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
	c.segment(true, nil, true, false)
	c.segment(false, nil, true, true)
	c.segment(true, nil, false, true)
	return c
}

func (c *conv) segment(fromClient bool, payload []byte, syn, ack bool) {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: c.cli, DstIP: c.srv}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(c.cport), DstPort: 9092, Seq: c.cseq, Ack: c.sseq, SYN: syn, ACK: ack, PSH: len(payload) > 0, Window: 65535}
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
	if syn {
		n = 1
	}
	if fromClient {
		c.cseq += n
	} else {
		c.sseq += n
	}
	if !syn {
		c.sent[side] += int64(len(payload))
	}
}
