package capture

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// Fetch is one partition of one captured Fetch exchange.
type Fetch struct {
	Time          time.Time // when the response's first byte was captured
	Conn          *Conn
	CorrelationID int32
	Version       int16
	Isolation     txnindex.Isolation
	Topic         string
	TopicID       [16]byte
	Partition     int32

	// FetchOffset is the offset the request asked for; -1 when the
	// partition was left out of an incremental fetch session's request
	// and no earlier request of the session named it.
	FetchOffset       int64
	PartitionMaxBytes int32

	ErrorCode        int16
	HighWatermark    int64
	LastStableOffset int64 // -1 before Fetch v4
	LogStartOffset   int64 // -1 before Fetch v5

	// Aborted is the aborted-transactions list, nil when the broker sent
	// a null list (read_uncommitted, or before Fetch v4).
	Aborted []txnindex.AbortedTransaction

	// RecordBytes is the length of the record set as received; its bytes
	// are not kept, only the headers of its batches.
	RecordBytes int
	Batches     []txnindex.Batch // its complete batches (a truncated tail is dropped, as clients do)
	Damage      []*loader.FormatError

	// Incomplete: TCP segments of the response were not captured, so
	// RecordBytes counts only the bytes before the gap; the broker sent more.
	Incomplete bool
}

// Response returns the fetch as the engine's FetchResponse.
func (f *Fetch) Response() txnindex.FetchResponse {
	return txnindex.FetchResponse{
		Err: txnindex.FetchError(f.ErrorCode), HighWatermark: f.HighWatermark,
		LastStableOffset: f.LastStableOffset, LogStartOffset: f.LogStartOffset,
		AbortedTransactions: f.Aborted, Batches: f.Batches, FirstBatch: -1, Segment: -1,
		Bytes: int64(f.RecordBytes),
	}
}

type pending struct {
	key, version int16
	req          kmsg.Request
}

type sessionKey struct {
	topic     string
	id        [16]byte
	partition int32
}

// Frame sizes: a request carries at least its header's API key, version,
// correlation id and client id length; a response its correlation id.
const (
	minRequest  = 10
	minResponse = 4
)

// plausibleRequest: a size in range, an API key and version kmsg knows, and
// a correlation id after the previous request's (clients count them up
// per request: librdkafka per broker connection, the Java client across
// its connections, so the step is small but need not be 1).
func plausibleRequest(b []byte, after int32) bool {
	if len(b) < 12 {
		return false
	}
	n := int32(binary.BigEndian.Uint32(b))
	if n < minRequest || n > maxFrame {
		return false
	}
	key, version := int16(binary.BigEndian.Uint16(b[4:])), int16(binary.BigEndian.Uint16(b[6:]))
	if key < 0 || key > 1000 || version < 0 || version > 100 {
		return false
	}
	corr := int32(binary.BigEndian.Uint32(b[8:]))
	if corr < 0 || after != noCorr && (corr <= after || corr-after > 1<<20) {
		return false
	}
	req := kmsg.RequestForKey(key)
	return req != nil && version <= req.MaxVersion()
}

// fetchesOf returns each partition of one Fetch exchange. session holds the
// offsets named by earlier requests of the connection's fetch session. The
// record bytes are parsed into batch headers here and not kept: fresp's
// byte fields point into the stream's buffer, which is reused.
func fetchesOf(conn *Conn, t time.Time, corr int32, version int16, freq *kmsg.FetchRequest, fresp *kmsg.FetchResponse, session map[sessionKey]int64, where string) []*Fetch {
	var out []*Fetch
	for _, t := range freq.Topics {
		for _, rp := range t.Partitions {
			session[sessionKey{t.Topic, t.TopicID, rp.Partition}] = rp.FetchOffset
		}
	}
	for _, rt := range fresp.Topics {
		for _, rp := range rt.Partitions {
			f := &Fetch{
				Time: t, Conn: conn, CorrelationID: corr, Version: version,
				Isolation: txnindex.Isolation(freq.IsolationLevel),
				Topic:     rt.Topic, TopicID: rt.TopicID, Partition: rp.Partition,
				FetchOffset: -1, ErrorCode: rp.ErrorCode, HighWatermark: rp.HighWatermark,
				LastStableOffset: rp.LastStableOffset, LogStartOffset: rp.LogStartOffset,
				RecordBytes: len(rp.RecordBatches),
			}
			if version < 4 {
				f.LastStableOffset = -1
			}
			if off, ok := session[sessionKey{rt.Topic, rt.TopicID, rp.Partition}]; ok {
				f.FetchOffset = off
			}
			for _, treq := range freq.Topics {
				if treq.Topic == rt.Topic && treq.TopicID == rt.TopicID {
					for _, preq := range treq.Partitions {
						if preq.Partition == rp.Partition {
							f.PartitionMaxBytes = preq.PartitionMaxBytes
						}
					}
				}
			}
			// kmsg decodes a null array as nil and an empty one as a
			// non-nil empty slice; keep that difference.
			if rp.AbortedTransactions != nil {
				f.Aborted = make([]txnindex.AbortedTransaction, 0, len(rp.AbortedTransactions))
				for _, a := range rp.AbortedTransactions {
					f.Aborted = append(f.Aborted, txnindex.AbortedTransaction{ProducerID: txnindex.ProducerID(a.ProducerID), FirstOffset: a.FirstOffset})
				}
			}
			name := fmt.Sprintf("%s fetch response corr %d %s-%d", where, corr, rt.Topic, rp.Partition)
			f.Batches, f.Damage = loader.ParseRecordSet(rp.RecordBatches, name)
			// The batches stay for the whole capture: without the spare
			// capacity sized for the record set's bytes.
			f.Batches = slices.Clone(f.Batches)
			out = append(out, f)
		}
	}
	return out
}

// partitionName is topic-partition, the topic by its id (as Kafka prints a
// Uuid: URL-safe base64 without padding) when a Fetch v13+ names it so and
// the capture holds no Metadata naming it.
func partitionName(f *Fetch) string {
	if f.Topic == "" {
		return fmt.Sprintf("topic id %s partition %d", base64.RawURLEncoding.EncodeToString(f.TopicID[:]), f.Partition)
	}
	return fmt.Sprintf("%s-%d", f.Topic, f.Partition)
}

func corrOf(req []byte) int32 {
	if len(req) < 8 {
		return -1
	}
	return int32(binary.BigEndian.Uint32(req[4:]))
}

// requestHeader parses a request header (v1, or v2 for flexible versions)
// and returns the pending exchange with an empty request of the right kind,
// or a nil request for API keys kmsg does not know.
func requestHeader(fr []byte) (pending, []byte, error) {
	if len(fr) < 10 {
		return pending{}, nil, fmt.Errorf("request header: want at least 10 bytes, found %d", len(fr))
	}
	p := pending{key: int16(binary.BigEndian.Uint16(fr)), version: int16(binary.BigEndian.Uint16(fr[2:]))}
	clientLen := int(int16(binary.BigEndian.Uint16(fr[8:])))
	body := fr[10:]
	if clientLen > 0 {
		if clientLen > len(body) {
			return p, nil, fmt.Errorf("request header: client id of %d bytes, %d left", clientLen, len(body))
		}
		body = body[clientLen:]
	}
	req := kmsg.RequestForKey(p.key)
	if req == nil {
		return p, body, nil
	}
	req.SetVersion(p.version)
	if p.version < 0 || p.version > req.MaxVersion() {
		return p, body, nil // a version this kmsg does not know: skip the exchange
	}
	if req.IsFlexible() {
		var err error
		if body, err = skipTags(body); err != nil {
			return p, nil, err
		}
	}
	p.req = req
	return p, body, nil
}

// skipTags skips a tagged-field section (KIP-482): a uvarint count, then
// per field a uvarint tag, a uvarint size and the data.
func skipTags(b []byte) ([]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, fmt.Errorf("tagged fields: bad count")
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		_, k = binary.Uvarint(b)
		if k <= 0 {
			return nil, fmt.Errorf("tagged field %d: bad tag", i)
		}
		b = b[k:]
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) {
			return nil, fmt.Errorf("tagged field %d: size %d exceeds the %d bytes left", i, size, len(b)-k)
		}
		b = b[uint64(k)+size:]
	}
	return b, nil
}
