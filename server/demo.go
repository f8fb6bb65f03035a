package server

import (
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// demoCatalog is a catalog of the embedded demos and, with big, the
// generated 1M-batch one.
func demoCatalog(big bool) *catalog {
	c := &catalog{}
	for _, d := range gen.Demos() {
		s := &source{id: d.Name, title: d.Title, topic: "demo-" + d.Name, demo: true, seeks: d.Scenario.Seeks}
		s.build = func() *txnindex.Log {
			// The demo's files stay on disk, so its records can be
			// decoded on demand (web_records.go).
			lp, l, err := d.Log()
			if err != nil {
				panic("demo " + d.Name + ": " + err.Error()) // the embedded demos are tested
			}
			s.files = lp
			return l
		}
		// Small demos are built now: cheap, and a broken one fails at start.
		s.get()
		s.topic, s.partition = s.log.Topic, s.log.Partition
		c.put(s)
	}
	if big {
		c.put(bigDemo())
	}
	return c
}

// bigDemo is the generated 1M-batch partition (gen.Big), built on first
// request, not at start-up.
func bigDemo() *source {
	return &source{id: "big", title: gen.BigTitle, topic: gen.BigTopic, demo: true,
		build: func() *txnindex.Log { return txnindex.Build(gen.Big(gen.BigBatches)) }}
}
