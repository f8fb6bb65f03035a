package capture

import (
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchPrefix decodes the beginning of a Fetch response body whose end
// was not captured. kmsg decodes whole messages only, so this follows its
// generated FetchResponse.readFrom field by field (versions 0 to 17, the
// flexible encoding from v12, topic ids from v13) with franz-go's kbin
// reader, and stops where the bytes end:
//
//   - partitions whose fields all arrived are returned whole;
//   - the partition the bytes end in is returned only if they end inside
//     its record set, which then holds the bytes that arrived; want is
//     the record set's declared length (-1 when the bytes end elsewhere,
//     since a partition missing its aborted-transaction list or high
//     watermark cannot be decided).
//
// The fields after the record set (tagged fields: diverging epoch,
// current leader, snapshot id) are not needed to decide delivery.
func fetchPrefix(src []byte, version int16) (resp *kmsg.FetchResponse, want int) {
	flex := version >= 12
	b := &kbin.Reader{Src: src}
	resp = kmsg.NewPtrFetchResponse()
	resp.Version = version
	arrayLen := func() int {
		if flex {
			return int(b.CompactArrayLen())
		}
		return int(b.ArrayLen())
	}
	tags := func() {
		for n := b.Uvarint(); n > 0 && b.Ok(); n-- {
			b.Uvarint()
			b.Span(int(b.Uvarint()))
		}
	}
	if version >= 1 {
		resp.ThrottleMillis = b.Int32()
	}
	if version >= 7 {
		resp.ErrorCode = b.Int16()
		resp.SessionID = b.Int32()
	}
	nt := arrayLen()
	for range nt {
		if !b.Ok() {
			break
		}
		t := kmsg.NewFetchResponseTopic()
		switch {
		case version >= 13:
			t.TopicID = b.Uuid()
		case flex:
			t.Topic = b.CompactString()
		default:
			t.Topic = b.String()
		}
		np := arrayLen()
		if !b.Ok() {
			break
		}
		// keep adds the topic with the partitions that arrived.
		keep := func() {
			if len(t.Partitions) > 0 {
				resp.Topics = append(resp.Topics, t)
			}
		}
		for range np {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = b.Int32()
			p.ErrorCode = b.Int16()
			p.HighWatermark = b.Int64()
			if version >= 4 {
				p.LastStableOffset = b.Int64()
			}
			if version >= 5 {
				p.LogStartOffset = b.Int64()
			}
			if version >= 4 {
				// A null list (-1) stays nil, as kmsg decodes it.
				na := arrayLen()
				if na >= 0 {
					p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
				}
				for range na {
					if !b.Ok() {
						break
					}
					a := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
					a.ProducerID = b.Int64()
					a.FirstOffset = b.Int64()
					if flex {
						tags()
					}
					p.AbortedTransactions = append(p.AbortedTransactions, a)
				}
			}
			if version >= 11 {
				p.PreferredReadReplica = b.Int32()
			}
			n := 0
			if flex {
				n = int(b.Uvarint()) - 1
			} else {
				n = int(b.Int32())
			}
			if !b.Ok() {
				keep()
				return resp, -1
			}
			if n > len(b.Src) {
				p.RecordBatches = b.Src
				t.Partitions = append(t.Partitions, p)
				keep()
				return resp, n
			}
			if n >= 0 {
				p.RecordBatches = b.Span(n)
			}
			if flex {
				tags()
			}
			if !b.Ok() {
				// Cut in the partition's tagged fields: its record
				// set is whole.
				t.Partitions = append(t.Partitions, p)
				keep()
				return resp, -1
			}
			t.Partitions = append(t.Partitions, p)
		}
		keep()
		if flex {
			tags()
		}
	}
	return resp, -1
}
