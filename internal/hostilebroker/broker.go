// Package hostilebroker is a Kafka broker for tests that answers in shapes a
// real broker never would: it speaks the wire protocol on loopback (request
// headers v1/v2, response headers v0/v1 as KIP-482 lays them out), decodes
// each request with kmsg and answers with whatever the test's Handler
// returns, including bytes cut short and connections closed mid-answer.
//
// Without a Handler, or when it returns nil, the broker plays one healthy
// node holding one topic: ApiVersions advertises every version kmsg knows,
// Metadata names this node the leader of every partition, ListOffsets
// answers the log start, high watermark and LSO the Broker holds, Fetch
// answers Records for every partition, and any other request gets its empty
// response (no error code, no entries), which a read-only client takes as
// "nothing to report".
package hostilebroker

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Reply is a Handler's answer. Resp is encoded with the request's version;
// Raw, when not nil, is sent instead as the response body (after the
// correlation id and header tags). Cut > 0 sends only the first Cut bytes
// of the framed answer (size prefix included) and then closes the
// connection: a half-sent answer. Close closes the connection without
// answering.
type Reply struct {
	Resp  kmsg.Response
	Raw   []byte
	Cut   int
	Close bool
}

// Handler answers one request; nil means the default answer.
type Handler func(req kmsg.Request) *Reply

// Broker is a running hostile broker.
type Broker struct {
	Topic      string
	TopicID    [16]byte
	Partitions int32
	// MoreTopics are listed by Metadata beside Topic, each with
	// Partitions partitions; the other answers serve every topic alike.
	MoreTopics []string
	// MoreBrokers are advertised by Metadata beside this one (node 0),
	// which still leads every partition: at closed ports they are the
	// brokers of a cluster a scan cannot reach.
	MoreBrokers []kmsg.MetadataResponseBroker
	// LogStart, HWM and LSO are what ListOffsets answers (earliest,
	// latest read_uncommitted, latest read_committed) and what Fetch
	// reports beside Records.
	LogStart, HWM, LSO int64
	// Records is the record set every Fetch answer carries, whatever
	// offset was asked for.
	Records []byte
	// Claims are answers far larger than what the cluster holds
	// (claims.go); the zero value claims nothing.
	Claims  Claims
	Handler Handler

	ln       net.Listener
	requests sync.Map // api key -> *atomic.Int64
	// answers caches the encoded answers of the Claims that do not
	// depend on what was asked (Everywhere), by api key and version: the
	// test's own allocations then stay out of what the client under test
	// allocates.
	answers sync.Map
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]bool
}

// New starts a broker on 127.0.0.1 holding topic with parts partitions and
// closes it when the test ends. Set its fields before the first client
// connects.
func New(t testing.TB, topic string, parts int32) *Broker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("hostilebroker: %v", err)
	}
	b := &Broker{Topic: topic, Partitions: parts, TopicID: [16]byte{0xde, 0xad, 1}, LSO: -1, ln: ln, conns: map[net.Conn]bool{}}
	b.wg.Add(1)
	go b.serve()
	t.Cleanup(b.Close)
	return b
}

// Addr is the broker's host:port, for a bootstrap list.
func (b *Broker) Addr() string { return b.ln.Addr().String() }

// Requests counts the requests received with api key k.
func (b *Broker) Requests(k kmsg.Key) int64 {
	if v, ok := b.requests.Load(int16(k)); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// Close stops listening, closes every connection and waits for them.
func (b *Broker) Close() {
	b.ln.Close()
	b.mu.Lock()
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

func (b *Broker) serve() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		b.conns[c] = true
		b.mu.Unlock()
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer func() {
				b.mu.Lock()
				delete(b.conns, c)
				b.mu.Unlock()
				c.Close()
			}()
			b.conn(c)
		}()
	}
}

// maxRequest bounds a request's size: the clients under test send small
// requests, and a test broker must not be the thing that runs out of memory.
const maxRequest = 1 << 20

func (b *Broker) conn(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(size[:])
		if n < 8 || n > maxRequest {
			return
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return
		}
		out, closeAfter, err := b.answer(buf)
		if err != nil {
			return
		}
		if _, err := c.Write(out); err != nil || closeAfter {
			return
		}
	}
}

// answer decodes one request (without its size) and frames the answer.
func (b *Broker) answer(buf []byte) (out []byte, closeAfter bool, err error) {
	key := int16(binary.BigEndian.Uint16(buf))
	version := int16(binary.BigEndian.Uint16(buf[2:]))
	corr := binary.BigEndian.Uint32(buf[4:])
	v, _ := b.requests.LoadOrStore(key, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	req := kmsg.RequestForKey(key)
	if req == nil {
		return nil, false, fmt.Errorf("unknown api key %d", key)
	}
	req.SetVersion(version)
	body, err := skipHeader(buf[8:], req.IsFlexible())
	if err != nil {
		return nil, false, err
	}
	if err := req.ReadFrom(body); err != nil {
		return nil, false, err
	}
	var rep *Reply
	if b.Handler != nil {
		rep = b.Handler(req)
	}
	if rep == nil {
		rep = b.claimed(req)
	}
	if rep == nil {
		rep = &Reply{Resp: b.Default(req)}
	}
	if rep.Close {
		return nil, false, errors.New("closed by the handler")
	}
	out = make([]byte, 4, 64)
	out = binary.BigEndian.AppendUint32(out, corr)
	// KIP-482: flexible responses carry header tags, except ApiVersions,
	// whose header stays v0 so that any client can read the answer.
	if req.IsFlexible() && key != int16(kmsg.ApiVersions) {
		out = append(out, 0)
	}
	if rep.Raw != nil {
		out = append(out, rep.Raw...)
	} else {
		rep.Resp.SetVersion(version)
		out = rep.Resp.AppendTo(out)
	}
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	if rep.Cut > 0 && rep.Cut < len(out) {
		return out[:rep.Cut], true, nil
	}
	return out, false, nil
}

// skipHeader returns the request body after the client id (a nullable
// int16-length string) and, for flexible requests, the header's tags.
func skipHeader(b []byte, flexible bool) ([]byte, error) {
	if len(b) < 2 {
		return nil, errors.New("short header")
	}
	n := int(int16(binary.BigEndian.Uint16(b)))
	b = b[2:]
	if n > 0 {
		if n > len(b) {
			return nil, errors.New("short client id")
		}
		b = b[n:]
	}
	if !flexible {
		return b, nil
	}
	tags, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, errors.New("bad tag count")
	}
	b = b[k:]
	for range tags {
		if _, k = binary.Uvarint(b); k <= 0 {
			return nil, errors.New("bad tag")
		}
		b = b[k:]
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) {
			return nil, errors.New("bad tag size")
		}
		b = b[k+int(size):]
	}
	return b, nil
}

// Default is the healthy answer to req (see the package comment).
func (b *Broker) Default(req kmsg.Request) kmsg.Response {
	switch req := req.(type) {
	case *kmsg.ApiVersionsRequest:
		resp := kmsg.NewPtrApiVersionsResponse()
		for k := int16(0); k <= kmsg.MaxKey; k++ {
			if r := kmsg.RequestForKey(k); r != nil {
				resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k, MaxVersion: r.MaxVersion()})
			}
		}
		return resp
	case *kmsg.MetadataRequest:
		return b.metadata()
	case *kmsg.ListOffsetsRequest:
		resp := kmsg.NewPtrListOffsetsResponse()
		for _, rt := range req.Topics {
			t := kmsg.NewListOffsetsResponseTopic()
			t.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				p := kmsg.NewListOffsetsResponseTopicPartition()
				p.Partition, p.Timestamp, p.LeaderEpoch = rp.Partition, -1, 0
				switch {
				case rp.Timestamp == -2:
					p.Offset = b.LogStart
				case req.IsolationLevel == 1 && b.LSO >= 0:
					p.Offset = b.LSO
				default:
					p.Offset = b.HWM
				}
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp
	case *kmsg.FetchRequest:
		resp := kmsg.NewPtrFetchResponse()
		for _, rt := range req.Topics {
			t := kmsg.NewFetchResponseTopic()
			t.Topic, t.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				p := kmsg.NewFetchResponseTopicPartition()
				p.Partition, p.HighWatermark, p.LogStartOffset = rp.Partition, b.HWM, b.LogStart
				p.LastStableOffset = b.HWM
				if b.LSO >= 0 {
					p.LastStableOffset = b.LSO
				}
				p.RecordBatches = b.Records
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp
	case *kmsg.DescribeProducersRequest:
		resp := kmsg.NewPtrDescribeProducersResponse()
		for _, rt := range req.Topics {
			t := kmsg.NewDescribeProducersResponseTopic()
			t.Topic = rt.Topic
			for _, id := range rt.Partitions {
				p := kmsg.NewDescribeProducersResponseTopicPartition()
				p.Partition = id
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp
	}
	return req.ResponseKind()
}

// metadata names this broker node 0, leader of every partition of every
// topic, whatever topics were asked for.
func (b *Broker) metadata() *kmsg.MetadataResponse {
	host, port, _ := net.SplitHostPort(b.Addr())
	p, _ := strconv.Atoi(port)
	resp := kmsg.NewPtrMetadataResponse()
	resp.ClusterID = kmsg.StringPtr("hostile")
	for id := range max(b.Claims.Nodes, 1) {
		br := kmsg.NewMetadataResponseBroker()
		br.NodeID, br.Host, br.Port = id, host, int32(p)
		resp.Brokers = append(resp.Brokers, br)
	}
	resp.Brokers = append(resp.Brokers, b.MoreBrokers...)
	for k, name := range append([]string{b.Topic}, b.MoreTopics...) {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic, t.TopicID = kmsg.StringPtr(name), b.TopicID
		t.TopicID[15] = byte(k)
		for i := range b.Partitions {
			mp := kmsg.NewMetadataResponseTopicPartition()
			mp.Partition, mp.Leader, mp.Replicas, mp.ISR = i, 0, []int32{0}, []int32{0}
			t.Partitions = append(t.Partitions, mp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}
