package input

import (
	"errors"
	"sort"

	"github.com/txnscope/txnscope/loader/capture"
	"github.com/txnscope/txnscope/txnindex"
)

// fromCapture groups a capture's fetches by consumer connection and
// partition. Each group is one partition to decide on: the consumer that
// received those responses, over the union of the batches it was sent.
func fromCapture(c *capture.Capture, kind string) *Contents {
	out := &Contents{Kind: kind, Capture: c, Problems: c.Problems}
	type key struct {
		conn      *capture.Conn
		topic     string
		partition int32
	}
	groups := map[key][]*capture.Fetch{}
	var order []key
	for _, f := range c.Fetches {
		k := key{f.Conn, f.Topic, f.Partition}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
		for _, d := range f.Damage {
			out.Problems = append(out.Problems, d)
		}
	}
	for _, k := range order {
		fs := groups[k]
		seen := map[int64]bool{}
		var batches []txnindex.Batch
		var fetches []txnindex.CapturedFetch
		hwm := int64(-1)
		for _, f := range fs {
			cf := txnindex.CapturedFetch{Offset: f.FetchOffset, Isolation: f.Isolation, Response: f.Response()}
			if !f.Time.IsZero() {
				cf.Time = f.Time.UnixMilli()
			}
			fetches = append(fetches, cf)
			if f.HighWatermark > hwm {
				hwm = f.HighWatermark
			}
			for _, b := range f.Batches {
				if !seen[b.BaseOffset] {
					seen[b.BaseOffset] = true
					batches = append(batches, b)
				}
			}
		}
		sort.SliceStable(batches, func(i, j int) bool { return batches[i].BaseOffset < batches[j].BaseOffset })
		var pos int64
		for i := range batches {
			batches[i].Segment = 0
			batches[i].SetPosition(pos)
			pos += int64(batches[i].Size)
		}
		name := k.topic
		if name == "" {
			name = "unknown-topic"
		}
		p := &txnindex.Partition{Topic: name, Partition: k.partition, Batches: batches, LogStartOffset: -1,
			HighWatermark: hwm, HighWatermarkSource: "capture"}
		if len(batches) > 0 {
			p.Segments = []txnindex.Segment{{Name: "fetched batches", BaseOffset: batches[0].BaseOffset, Size: pos}}
		}
		l := txnindex.Build(p)
		l.Fetches = fetches
		out.Partitions = append(out.Partitions, &Partition{Log: l, Fetches: fetches, Isolation: fs[0].Isolation})
	}
	if len(out.Partitions) == 0 {
		if err := c.NoFetch(); err != nil {
			out.Problems = append(out.Problems, err)
		} else {
			out.Problems = append(out.Problems, errors.New(c.Name+": the capture's Fetch responses hold no partition data"))
		}
	}
	return out
}
