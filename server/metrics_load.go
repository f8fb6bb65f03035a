package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/live/metrics"
	"github.com/txnscope/txnscope/view"
)

// loadedMetrics is /metrics of serve --load: on each scrape, the series of
// every loaded partition whose diagnosis is known, the same
// txnscope_partition_lso_lag_* series a live cluster gets. A partition
// opened in full gives its diagnosis on the server's clock; one of a log
// directory not opened gives its tail scan's, its LSO held measured again
// now; one not scanned yet has no series until it is. Nothing is loaded
// for a scrape. The same topic-partition loaded twice keeps the later load's
// series, as the registry takes one series per label set.
func loadedMetrics(cat *catalog, m *metrics.Collector) http.Handler {
	h := m.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var parts []metrics.Partition
		for _, s := range cat.list() {
			if !strings.HasPrefix(s.id, "load") {
				continue // the demos and uploads are no production partitions
			}
			var d *diagnosis.Diagnosis
			if l := s.built(); l != nil {
				d = view.Diagnose(l, diagnosis.Options{Now: start, Position: -1})
			} else if s.lazy != nil {
				d = s.lazy.scanView().Diagnosis
			}
			if d == nil || d.Note != "" {
				continue // not known yet, or not a data partition
			}
			p := metrics.Partition{Topic: s.topic, Partition: s.partition, LagOffsets: d.LSOLagOffsets, Open: d.OpenCount()}
			if held, _ := d.HeldAt(start.UnixMilli()); held > 0 {
				p.LagSeconds = float64(held) / 1000
			}
			for _, t := range d.OpenTransactions {
				if t.State == diagnosis.StateHanging {
					p.Hanging++
				}
			}
			parts = append(parts, p)
		}
		m.Set(parts, time.Since(start), start)
		h.ServeHTTP(w, r)
	})
}

// noMetrics answers /metrics of a server with nothing to measure: what
// would serve it, rather than a bare 404.
func noMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprintln(w, "txnscope serves /metrics (Prometheus text) for the partitions it watches or loads:")
	fmt.Fprintln(w, "  txnscope serve --bootstrap HOST:PORT            every partition of a live cluster")
	fmt.Fprintln(w, "  txnscope serve --bootstrap HOST:PORT --topic T  one topic, watched")
	fmt.Fprintln(w, "  txnscope serve --load /var/lib/kafka/data       the partitions of a log directory")
	fmt.Fprintln(w, "This server serves only its demos, which have no series.")
}
