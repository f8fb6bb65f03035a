package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/live/metrics"
)

// liveSourceID is the source id of the watched partitions in serve mode.
const liveSourceID = "live"

// startLive dials the cluster, takes a first poll (so that every watched
// partition has a log before the server listens, and a dead cluster, bad
// credentials, a missing topic or a denied ACL fail the command at once),
// adds the partitions to the catalog as source "live" and starts polling.
// stop ends the polling and flushes the recording. m, when not nil, gets
// every poll (/metrics).
func startLive(ctx context.Context, stderr io.Writer, cfg live.Config, record string, cat *catalog, m *metrics.Collector) (stop func(), err error) {
	var rec *os.File
	if record != "" {
		if rec, err = os.Create(record); err != nil {
			return nil, err
		}
		cfg.Record = rec
	}
	fail := func(err error) (func(), error) {
		if rec != nil {
			rec.Close()
			os.Remove(record) // nothing useful recorded: leave no capture behind
		}
		return nil, err
	}
	w, err := live.Dial(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	u, err := w.Poll(ctx)
	if err != nil {
		w.Close()
		return fail(err)
	}
	feed := api.NewLiveFeed(w.Bootstrap(), cfg.Topic)
	apply := func(u live.Update) {
		feed.Apply(u)
		if m != nil {
			m.ObserveUpdate(u, time.Since(u.Time)) // Update.Time is when the poll started
		}
	}
	apply(u)
	title := fmt.Sprintf("live: %s on %s", cfg.Topic, w.Bootstrap())
	for _, pv := range u.Partitions {
		cat.put(&source{id: liveSourceID, title: title, topic: cfg.Topic, partition: pv.Partition, live: feed.Partition(pv.Partition)})
	}
	for _, n := range u.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := w.Run(ctx, apply)
		if ctx.Err() == nil {
			// A fatal error (credentials, ACLs, the topic deleted): the
			// page keeps the last view and says why it stopped.
			slog.Error("live: watching stopped", "err", err)
			feed.Fail(err)
		}
		if err := w.Close(); err != nil {
			slog.Error("live: closing the recording", "err", err)
		}
		if rec != nil {
			if err := rec.Close(); err != nil {
				slog.Error("live: closing the recording", "err", err)
			}
		}
	}()
	return func() { cancel(); <-done }, nil
}

// Subscribe implements api.Feed for the live sources of the catalog.
func (c apiCatalog) Subscribe(id, topic string, partition int32) (<-chan struct{}, func(), bool) {
	s := c.find(id, topic, partition)
	if s != nil && s.lazy != nil {
		return s.lazy.subscribe() // the full load landing (catalog_lazy.go)
	}
	if s == nil || s.live == nil {
		return nil, nil, false
	}
	ch, cancel := s.live.Subscribe()
	return ch, cancel, true
}

// Live implements api.Feed.
func (c apiCatalog) Live(id, topic string, partition int32) (api.LiveStatus, bool) {
	s := c.find(id, topic, partition)
	if s == nil || s.live == nil {
		return api.LiveStatus{}, false
	}
	return s.live.Status(), true
}

var _ api.Feed = apiCatalog{}
