// Package metrics exposes what txnscope sees of a live cluster as
// Prometheus metrics: per partition the LSO lag in offsets and seconds and
// the open and hanging transactions, and per scan its duration, so that an
// alert can fire when a read_committed consumer is held back.
//
// A Collector holds the latest observation (a cluster scan, or a
// single-topic watcher's update) and renders it on each scrape; partitions
// that disappear from an observation disappear from the output, so no stale
// series linger. It depends on live and Prometheus only, not on the web
// server, which mounts Handler.
package metrics

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/txnscope/txnscope/live"
)

// Metric names.
const (
	NameLagOffsets   = "txnscope_partition_lso_lag_offsets"
	NameLagSeconds   = "txnscope_partition_lso_lag_seconds"
	NameOpen         = "txnscope_open_transactions"
	NameHanging      = "txnscope_hanging_transactions"
	NameScanDuration = "txnscope_scan_duration_seconds"
	NameMismatches   = "txnscope_broker_engine_mismatch_total"
	NameBrokerUp     = "txnscope_broker_up"
	NameScanRequests = "txnscope_scan_requests"
	NameLastScan     = "txnscope_last_scan_timestamp_seconds"
	NameSkipped      = "txnscope_partitions_without_series"
)

// Options tune a Collector.
type Options struct {
	// ConstLabels are put on every series, e.g. {"cluster": "prod-eu"}
	// when several txnscope instances (one per cluster) feed one
	// Prometheus and its relabelling does not already tell them apart.
	ConstLabels prometheus.Labels
	// LaggingOnly leaves out the per-partition series of partitions
	// with no lag and no open transaction. Four series per partition is
	// 400,000 for a cluster of 100,000 partitions; with this an absent
	// series means lag 0.
	LaggingOnly bool
}

// Partition is one partition's observation.
type Partition struct {
	Topic      string
	Partition  int32
	LagOffsets int64   // high watermark - LSO
	LagSeconds float64 // how long the LSO has been held; 0 when clear
	Open       int     // open transactions on the partition
	Hanging    int     // of those, hanging by KIP-664's rule
}

type broker struct {
	id int32
	up bool
}

// Collector is a prometheus.Collector of the latest observation. Its
// methods are safe for concurrent use: a scan loop observes while scrapes
// collect.
type Collector struct {
	o Options

	lagOffsets, lagSeconds, open, hanging          *prometheus.Desc
	scanDuration, mismatches, up, requests, lastAt *prometheus.Desc
	skipped                                        *prometheus.Desc

	mu         sync.Mutex
	parts      []Partition
	brokers    []broker
	scanned    bool
	duration   time.Duration
	at         time.Time
	nrequests  int
	haveReqs   bool
	mismatchTo uint64
}

// New returns an empty Collector; it exports only the mismatch counter
// until the first observation.
func New(o Options) *Collector {
	pl := []string{"topic", "partition"}
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, o.ConstLabels)
	}
	return &Collector{
		o: o,
		lagOffsets: d(NameLagOffsets, "Offsets between the partition's high watermark and its last stable offset: "+
			"what a read_committed consumer cannot read yet (ListOffsets read_uncommitted minus read_committed).", pl),
		lagSeconds: d(NameLagSeconds, "How long the last stable offset has been held: since the pinning transaction started "+
			"(DescribeTransactions), or since its last write when the coordinator did not describe it; 0 when clear.", pl),
		open:         d(NameOpen, "Open transactions on the partition (DescribeProducers' producers with a current transaction).", pl),
		hanging:      d(NameHanging, "Open transactions on the partition that are hanging by KIP-664's rule: no write for longer than transaction.max.timeout.ms and no coordinator that will end them.", pl),
		scanDuration: d(NameScanDuration, "Duration of the latest scan (cluster mode) or poll (single-topic live mode).", nil),
		mismatches:   d(NameMismatches, "Differences between txnscope's engine and the broker (LSO, aborted lists, delivered offsets), summed over polls; always 0 in cluster mode, which runs no engine.", nil),
		up:           d(NameBrokerUp, "1 if the broker answered the latest scan, 0 if it was unreachable (its partitions then have no series).", []string{"broker"}),
		requests:     d(NameScanRequests, "Requests the latest scan sent to the cluster.", nil),
		lastAt:       d(NameLastScan, "Unix time of the latest successful scan or poll.", nil),
		skipped:      d(NameSkipped, "Partitions of the latest observation left out because a label could not be exported (the other series are served).", nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.lagOffsets, c.lagSeconds, c.open, c.hanging, c.scanDuration, c.mismatches, c.up, c.requests, c.lastAt, c.skipped} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(c.mismatches, prometheus.CounterValue, float64(c.mismatchTo))
	if !c.scanned {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.scanDuration, prometheus.GaugeValue, c.duration.Seconds())
	ch <- prometheus.MustNewConstMetric(c.lastAt, prometheus.GaugeValue, float64(c.at.UnixMilli())/1000)
	if c.haveReqs {
		ch <- prometheus.MustNewConstMetric(c.requests, prometheus.GaugeValue, float64(c.nrequests))
	}
	for _, b := range c.brokers {
		v := 0.0
		if b.up {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, v, strconv.Itoa(int(b.id)))
	}
	dropped := 0
	for _, p := range c.parts {
		if c.o.LaggingOnly && p.LagOffsets == 0 && p.Open == 0 {
			continue
		}
		topic, part := LabelValue(p.Topic), strconv.Itoa(int(p.Partition))
		ms := make([]prometheus.Metric, 0, 4)
		for _, m := range []struct {
			d *prometheus.Desc
			v float64
		}{{c.lagOffsets, float64(p.LagOffsets)}, {c.lagSeconds, p.LagSeconds}, {c.open, float64(p.Open)}, {c.hanging, float64(p.Hanging)}} {
			cm, err := prometheus.NewConstMetric(m.d, prometheus.GaugeValue, m.v, topic, part)
			if err != nil {
				break
			}
			ms = append(ms, cm)
		}
		if len(ms) < 4 {
			// A series the registry would refuse fails the whole
			// scrape: leave the partition out, counted below.
			dropped++
			continue
		}
		for _, m := range ms {
			ch <- m
		}
	}
	ch <- prometheus.MustNewConstMetric(c.skipped, prometheus.GaugeValue, float64(dropped))
}

// LabelValue is a topic name as a label value. Prometheus refuses a label
// value that is not valid UTF-8, and one refused series makes the whole
// scrape answer 500, silencing every alert. Kafka allows only ASCII
// letters, digits, '.', '_' and '-' in a topic name (Topic.validate), so
// a name with other bytes comes from a broken or hostile broker: each byte
// of an invalid UTF-8 sequence becomes \xNN and a backslash becomes \\, so
// that two different names never share a label value.
func LabelValue(s string) string {
	if utf8.ValidString(s) && !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Set replaces the per-partition observation, for a mode that is neither
// a cluster scan nor a watcher's update. A partition listed twice keeps
// its last entry (the registry would refuse duplicate series).
func (c *Collector) Set(parts []Partition, took time.Duration, at time.Time) {
	seen := map[[2]string]int{}
	var out []Partition
	for _, p := range parts {
		k := [2]string{p.Topic, strconv.Itoa(int(p.Partition))}
		if i, ok := seen[k]; ok {
			out[i] = p
			continue
		}
		seen[k] = len(out)
		out = append(out, p)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.parts, c.duration, c.at, c.scanned = out, took, at, true
}

// ObserveScan takes a cluster scan: the partitions whose offsets it read
// (an unreachable leader's have no series until it answers again), the
// brokers, the scan's duration and request count.
func (c *Collector) ObserveScan(s *live.ClusterScan) {
	parts := make([]Partition, 0, len(s.Partitions))
	for i := range s.Partitions {
		p := &s.Partitions[i]
		if p.Err != "" {
			continue
		}
		h := 0
		for _, t := range p.Open {
			if t.Hanging {
				h++
			}
		}
		parts = append(parts, Partition{Topic: p.Topic, Partition: p.Partition, LagOffsets: p.LSOLagOffsets, LagSeconds: p.LagSeconds(), Open: max(p.OpenTotal, len(p.Open)), Hanging: h})
	}
	bs := make([]broker, 0, len(s.Brokers))
	for _, b := range s.Brokers {
		bs = append(bs, broker{id: b.ID, up: b.Err == ""})
	}
	slices.SortFunc(bs, func(a, b broker) int { return int(a.id) - int(b.id) })
	c.Set(parts, s.Duration, s.Time)
	c.mu.Lock()
	c.brokers, c.nrequests, c.haveReqs = bs, s.RequestCount, true
	c.mu.Unlock()
}

// ObserveUpdate takes a single-topic watcher's update (live mode with
// --topic) and the time its poll took: the lag from its ListOffsets, how
// long the LSO has been held from the engine's diagnosis (the pinning
// transaction's first timestamp), its open and hanging transactions, and
// adds its mismatches to the counter. An update that reports a failed poll
// (Err) changes nothing.
func (c *Collector) ObserveUpdate(u live.Update, took time.Duration) {
	if u.Err != "" {
		return
	}
	parts := make([]Partition, 0, len(u.Partitions))
	for i := range u.Partitions {
		v := &u.Partitions[i]
		p := Partition{Topic: u.Topic, Partition: v.Partition, LagOffsets: max(v.ListedHWM-v.ListedLSO, 0), Open: len(v.Open)}
		for _, t := range v.Open {
			if t.Hanging {
				p.Hanging++
			}
		}
		if p.LagOffsets > 0 {
			if d := v.Diagnosis; d != nil && d.PinnedBy != nil && d.PinnedBy.FirstTimestamp > 0 {
				p.LagSeconds = max(float64(u.Time.UnixMilli()-d.PinnedBy.FirstTimestamp)/1000, 0)
			} else {
				for _, t := range v.Open {
					if t.PinsLSO {
						p.LagSeconds = float64(t.AgeMs) / 1000
					}
				}
			}
		}
		parts = append(parts, p)
	}
	c.Set(parts, took, u.Time)
	c.AddMismatches(len(u.Mismatches))
}

// AddMismatches adds to txnscope_broker_engine_mismatch_total.
func (c *Collector) AddMismatches(n int) {
	if n <= 0 {
		return
	}
	c.mu.Lock()
	c.mismatchTo += uint64(n)
	c.mu.Unlock()
}

// Handler serves the collector, with the Go runtime's and the process's
// standard metrics and the extra collectors (the server's own, such as
// its memory budget), in Prometheus' text format (or OpenMetrics when
// asked). The server mounts it at /metrics behind its auth token.
func (c *Collector) Handler(extra ...prometheus.Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(extra...)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}
