package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/live/metrics"
	"github.com/txnscope/txnscope/web"
)

// clusterWindow is how many offsets below the high watermark a partition's
// live timeline starts at when opened from the cluster view (bounded
// further by --max-batches), unless --from or --last says otherwise.
const clusterWindow = 2000

// maxClusterWatches bounds the partitions opened from the cluster view:
// each is a watcher polling its leader every --poll.
const maxClusterWatches = 16

// clusterServe is `serve --bootstrap` without --topic: a scan every --poll
// (default live.DefaultScanPoll), the latest kept for the cluster view and
// /metrics, and a watcher per partition opened from the view.
type clusterServe struct {
	ctx  context.Context
	poll time.Duration
	o    *Options
	cat  *catalog

	mu   sync.Mutex // guards scan and err
	scan *live.ClusterScan
	err  error

	// openMu serializes opening partitions (a dial and a first poll,
	// up to seconds) without holding up the view or the scans.
	openMu sync.Mutex
	opened map[string]bool
	stops  []func()
}

// startCluster connects, scans once (so that a dead cluster or bad
// credentials fail the command at once) and keeps scanning until stop.
func startCluster(ctx context.Context, o *Options, cat *catalog, m *metrics.Collector) (*clusterServe, func(), error) {
	cfg := live.Config{Brokers: live.SplitBrokers(o.Bootstrap), Poll: cmp.Or(o.Poll, live.DefaultScanPoll), MaxTxnTimeout: o.MaxTxnTimeout,
		DialTimeout: o.DialTimeout, SASL: o.SASL, TLS: o.TLS}
	c, err := live.NewCluster(cfg)
	if err != nil {
		return nil, nil, err
	}
	s, err := c.Scan(ctx, live.ScanOptions{})
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	m.ObserveScan(s)
	cs := &clusterServe{o: o, cat: cat, poll: cfg.Poll, scan: s, opened: map[string]bool{}}
	ctx, cancel := context.WithCancel(ctx)
	cs.ctx = ctx
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := c.Run(ctx, live.ScanOptions{}, func(s *live.ClusterScan, err error) {
			if s != nil {
				m.ObserveScan(s)
			}
			cs.mu.Lock()
			if s != nil {
				cs.scan = s
			}
			cs.err = err
			cs.mu.Unlock()
		})
		if ctx.Err() == nil {
			slog.Error("live: cluster scans stopped", "err", err)
			cs.mu.Lock()
			cs.err = err
			cs.mu.Unlock()
		}
		c.Close()
	}()
	stop := func() {
		cancel()
		<-done
		cs.openMu.Lock()
		stops := cs.stops
		cs.openMu.Unlock()
		for _, s := range stops {
			s()
		}
	}
	return cs, stop, nil
}

func (cs *clusterServe) latest() (*live.ClusterScan, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.scan, cs.err
}

// index is the cluster view (package web).
func (cs *clusterServe) index() http.Handler {
	window := int64(clusterWindow)
	if cs.o.Last > 0 {
		window = cs.o.Last
	}
	return web.ClusterIndex(cs.latest, cs.o.Bootstrap, cs.poll, window)
}

// open serves /cluster/{topic}/{partition}: it starts watching the
// partition's tail (startLive, as serve --topic does, one partition), once,
// and redirects to its timeline. Only a partition of the latest scan can
// be opened, and at most maxClusterWatches.
func (cs *clusterServe) open() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		topic := r.PathValue("topic")
		p, err := strconv.ParseInt(r.PathValue("partition"), 10, 32)
		if err != nil {
			http.Error(w, "partition is not a number", http.StatusBadRequest)
			return
		}
		s, _ := cs.latest()
		if !scanned(s, topic, int32(p)) {
			http.Error(w, fmt.Sprintf("no partition %s-%d in the latest scan", topic, p), http.StatusNotFound)
			return
		}
		key := topic + "/" + strconv.FormatInt(p, 10)
		cs.openMu.Lock()
		defer cs.openMu.Unlock()
		if !cs.opened[key] {
			if len(cs.opened) >= maxClusterWatches {
				http.Error(w, fmt.Sprintf("%d partitions are already watched; restart the server to watch others", maxClusterWatches), http.StatusServiceUnavailable)
				return
			}
			part, last := strconv.FormatInt(p, 10), cs.o.Last
			if cs.o.From < 0 && last <= 0 {
				last = clusterWindow
			}
			cfg, err := cs.o.liveConfig(topic, []int32{int32(p)}, last)
			var stop func()
			if err == nil {
				stop, err = startLive(cs.ctx, cs.o.Stderr, cfg, "", cs.cat, nil) // no --record: the recording is --topic's
			}
			if err != nil {
				http.Error(w, "watching "+topic+"-"+part+": "+err.Error(), http.StatusBadGateway)
				return
			}
			cs.opened[key] = true
			cs.stops = append(cs.stops, stop)
		}
		http.Redirect(w, r, web.PartitionPath(liveSourceID, topic, int32(p)), http.StatusSeeOther)
	})
}

func scanned(s *live.ClusterScan, topic string, p int32) bool {
	if s == nil {
		return false
	}
	for i := range s.Partitions {
		if s.Partitions[i].Topic == topic && s.Partitions[i].Partition == p {
			return true
		}
	}
	return false
}
