package load

import "testing"

// TestChooseReadsBySegmentOrRefusesOverBudget: the one policy, question ×
// cost × budget → the path and the sentence the commands print. Within
// the budget a question takes its own path (a tail only of a data
// partition); over it, a question that segment windows can answer about a
// partition directory is read so, anything else is refused; each bound's
// sentence names the flag that sets it.
func TestChooseReadsBySegmentOrRefusesOverBudget(t *testing.T) {
	part := Cost{Path: "/data/t-0", Name: "t-0", Partition: true, Data: true, SegmentBytes: 384 << 10, LastSegment: "/data/t-0/00000000000000000900.log"}
	internal := Cost{Path: "/data/__consumer_offsets-3", Name: "__consumer_offsets-3", Partition: true}
	file := Cost{Path: "x.pcap", Name: "x.pcap"}
	logDir := Cost{Path: "/data", Name: "data", LogDir: true}
	with := func(c Cost, f func(*Cost)) Cost { f(&c); return c }
	decide := Question{Kind: Whole, Position: -1, Segments: true}
	decideFrom := Question{Kind: Tail, Position: 100, Reasons: true, Segments: true}
	inspect := Question{Kind: Whole, Position: -1, LogDir: true}
	serve := Question{Kind: Whole, Position: -1, LogDir: true, Segments: true}
	for _, c := range []struct {
		name string
		q    Question
		c    Cost
		b    Budget
		path Path
		why  string
	}{
		{"no budget: whole", Question{Kind: Whole, Position: -1}, part, Budget{}, ReadWhole, ""},
		{"a tail of a data partition", Question{Kind: Tail, Position: -1}, part, Budget{}, ReadTail, ""},
		{"a tail of an internal topic's partition: whole, its records are evidence", Question{Kind: Tail, Position: -1}, internal, Budget{}, ReadWhole, ""},
		{"a tail of a file: whole", Question{Kind: Tail, Position: -1}, file, Budget{}, ReadWhole, ""},
		{"windows asked for", Question{Kind: Window, Position: -1}, part, Budget{}, ReadBySegment, ""},
		{"a log directory listed", inspect, logDir, Budget{MaxMemory: 1}, ReadLogDir, ""},
		{"a log directory not asked to be listed: whole", Question{Kind: Whole, Position: -1}, logDir, Budget{}, ReadWhole, ""},
		{"within half of --max-memory", decide, with(part, func(c *Cost) { c.Batches = 156 }), Budget{MaxMemory: 40000}, ReadWhole, ""},
		{"exactly half of --max-memory", decide, with(part, func(c *Cost) { c.Batches = 150 }), Budget{MaxMemory: 38400}, ReadWhole, ""},
		{"no batch sampled: nothing to bound", decide, part, Budget{MaxMemory: 1}, ReadWhole, ""},
		{"over half of --max-memory: decided by segment", decide, with(part, func(c *Cost) { c.Batches = 384 }), Budget{MaxMemory: 20000}, ReadBySegment,
			"/data/t-0 holds 384.0 KiB of segments, whose whole load would take about 48.0 KiB, more than half of --max-memory 19.5 KiB: decided a segment at a time (--full-replay loads it whole)"},
		{"a tail from a position over it: by segment, the load named from there", decideFrom, with(part, func(c *Cost) { c.Batches = 384 }), Budget{MaxMemory: 20000}, ReadBySegment,
			"/data/t-0 holds 384.0 KiB of segments, whose load from offset 100 on would take about 48.0 KiB, more than half of --max-memory 19.5 KiB: decided a segment at a time (--full-replay loads it whole)"},
		{"a tail from a position within it", decideFrom, with(part, func(c *Cost) { c.Batches = 10 }), Budget{MaxMemory: 20000}, ReadTail, ""},
		{"every batch's report over it: refused, a segment file named", inspect, with(part, func(c *Cost) { c.Batches = 384 }), Budget{MaxMemory: 20000}, Refused,
			"/data/t-0: not inspected: it holds 384.0 KiB of segments, whose whole load would take about 48.0 KiB, more than half of --max-memory 19.5 KiB; inspect a segment file at a time (inspect /data/t-0/00000000000000000900.log), raise --max-memory, or read it with diagnose or decide, which stay within it"},
		{"not a partition directory: --max-memory bounds none", decide, with(file, func(c *Cost) { c.Kept = 30000 }), Budget{MaxMemory: 20000}, ReadWhole, ""},
		{"a partition over --max-source-bytes: drawn by segment", serve, with(part, func(c *Cost) { c.FileBytes = 2048 }), Budget{MaxFileBytes: 1000}, ReadBySegment,
			"t-0 holds 2.0 KiB of files, more than --max-source-bytes (1000 B) allows: not opened in full"},
		{"anything else over --max-source-bytes: refused", serve, with(file, func(c *Cost) { c.FileBytes = 1001 }), Budget{MaxFileBytes: 1000}, Refused,
			"more than 1000 B of files, over --max-source-bytes (1000 B); raise the limit, or load a partition directory, which is drawn segment by segment when over it"},
		{"at --max-source-bytes: whole", serve, with(part, func(c *Cost) { c.FileBytes = 1000 }), Budget{MaxFileBytes: 1000}, ReadWhole, ""},
		{"batches counted over --max-source-batches: drawn by segment", serve, with(part, func(c *Cost) { c.Batches, c.Largest, c.LargestName, c.Counted = 9, 9, "demo-interleaved-0", true }), Budget{MaxBatches: 8}, ReadBySegment,
			"demo-interleaved-0 holds 9 batches, more than --max-source-batches (8) allows: not opened in full"},
		{"a capture's partition counted over it: refused", serve, with(file, func(c *Cost) { c.Batches, c.Largest, c.LargestName, c.Counted = 12, 9, "orders-3", true }), Budget{MaxBatches: 8}, Refused,
			"orders-3 holds 9 batches, more than --max-source-batches (8) allows: not opened in full"},
		{"batches only estimated: counted once read", serve, with(part, func(c *Cost) { c.Batches, c.Largest = 9, 9 }), Budget{MaxBatches: 8}, ReadWhole, ""},
		{"a partition over a quarter of serve's --max-memory: drawn by segment", serve, with(part, func(c *Cost) { c.Batches = 9000 }), Budget{MaxShared: 4 << 20}, ReadBySegment,
			"t-0 holds 384.0 KiB of segments, whose whole load would take about 1.1 MiB, more than one partition opened whole may take (1.0 MiB, a quarter of --max-memory 4.0 MiB): not opened in full"},
		{"within a quarter of it", serve, with(part, func(c *Cost) { c.Batches = 8192 }), Budget{MaxShared: 4 << 20}, ReadWhole, ""},
		{"an upload over --max-upload-memory: refused", Question{Kind: Whole}, Cost{Kept: 1 << 20, Batches: 1024, Counted: true}, Budget{MaxKept: 1 << 20}, Refused,
			"it holds about 1.1 MiB in memory once decoded, more than serve --max-upload-memory 1.0 MiB allows all uploads together"},
		{"an upload within it", Question{Kind: Whole}, Cost{Kept: 1 << 19, Batches: 1024, Counted: true}, Budget{MaxKept: 1 << 20}, ReadWhole, ""},
	} {
		got := Choose(c.q, c.c, c.b)
		if got.Path != c.path || got.Why != c.why {
			t.Errorf("%s:\n got %v %q\nwant %v %q", c.name, got.Path, got.Why, c.path, c.why)
		}
	}
}

// TestOneLoadIsTheSmallerShare: one load may keep half of --max-memory, a
// quarter of serve's, the smaller when both are set.
func TestOneLoadIsTheSmallerShare(t *testing.T) {
	for _, c := range []struct {
		b    Budget
		want int64
	}{
		{Budget{}, 0},
		{Budget{MaxMemory: 100}, 50},
		{Budget{MaxShared: 100}, 25},
		{Budget{MaxMemory: 100, MaxShared: 400}, 50},
		{Budget{MaxMemory: 100, MaxShared: 40}, 10},
	} {
		if got := c.b.OneLoad(); got != c.want {
			t.Errorf("%+v: OneLoad %d, want %d", c.b, got, c.want)
		}
	}
}
