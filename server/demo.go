package cli

import (
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// findDemo is gen.FindDemo with an unknown name as the caller's mistake.
func findDemo(name string) (gen.Demo, error) {
	d, err := gen.FindDemo(name)
	if err != nil {
		return gen.Demo{}, usagef("%v", err)
	}
	return d, nil
}

// demoCatalog is a catalog of the embedded demos and, with big, the
// generated 1M-batch one.
func demoCatalog(big bool) *catalog {
	c := &catalog{}
	for _, d := range gen.Demos() {
		s := &source{id: d.Name, title: d.Title, topic: "demo-" + d.Name, demo: true, seeks: d.Scenario.Seeks}
		s.build = func() *txnindex.Log {
			// The demo's files stay on disk, so its records can be
			// decoded on demand (web_records.go).
			lp, err := d.Open()
			if err != nil {
				panic("demo " + d.Name + ": " + err.Error()) // the embedded demos are tested
			}
			s.files = lp
			l := txnindex.Build(lp.Input)
			// The scenario names its producers ("producer orders
			// transactional id 7"): the lanes show the names.
			l.ProducerNames = map[txnindex.ProducerID]string{}
			for _, p := range d.Scenario.Producers {
				l.ProducerNames[txnindex.ProducerID(p.ID)] = p.Name
			}
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
	return &source{id: "big", title: "1M generated batches (level-of-detail demo)", topic: gen.BigTopic, demo: true,
		build: func() *txnindex.Log { return txnindex.Build(gen.Big(gen.BigBatches)) }}
}
