package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/live/metrics"
)

// loadedMetrics is /metrics of serve --load: on each scrape, the series of
// every loaded partition whose diagnosis is known, the same
// txnscope_partition_lso_lag_* series a live cluster gets. A partition
// opened in full gives its diagnosis on the server's clock; one of a log
// directory not opened gives its tail scan's, its LSO held measured again
// now; one not scanned yet has no series until it is. Nothing is loaded
// for a scrape. The same topic-partition loaded twice keeps the later load's
// series, as the registry takes one series per label set.
func loadedMetrics(cat *catalog, m *metrics.Collector, extra ...prometheus.Collector) http.Handler {
	h := m.Handler(extra...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var parts []metrics.Partition
		for _, s := range cat.list() {
			if !strings.HasPrefix(s.id, "load") {
				continue // the demos and uploads are no production partitions
			}
			var d *diagnosis.Diagnosis
			if l := s.built(); l != nil {
				d = cat.diags.Diagnose(l, diagnosis.Options{Now: start, Position: -1})
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

// The series of the memory budget (catalog_lazy_budget.go).
const (
	NameOpenedBytes     = "txnscope_opened_partition_bytes"
	NameOpenedEvictions = "txnscope_opened_partition_evictions_total"
	NameMemoryBudget    = "txnscope_memory_budget_bytes"
)

// budgetMetrics is the memory budget on /metrics: what the partitions
// opened whole hold, how many were evicted to stay within it, and the
// budget itself.
type budgetMetrics struct {
	b                       *memBudget
	held, evictions, budget *prometheus.Desc
}

func newBudgetMetrics(b *memBudget) *budgetMetrics {
	return &budgetMetrics{b: b,
		held: prometheus.NewDesc(NameOpenedBytes, "Bytes the partitions of a log directory opened whole (or the tails shown while they load) hold, by the loader's estimate, "+
			"loads in flight counted at their estimate; they share the budget with the segment windows and the stream's kept encodings.", nil, nil),
		evictions: prometheus.NewDesc(NameOpenedEvictions, "Partitions opened whole (or their tails) dropped, least recently used first, to stay within the budget; the next request opens them again.", nil, nil),
		budget:    prometheus.NewDesc(NameMemoryBudget, "What the server keeps of partitions may hold: half of --max-memory, the other half being the garbage collector's headroom.", nil, nil),
	}
}

func (m *budgetMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.held
	ch <- m.evictions
	ch <- m.budget
}

func (m *budgetMetrics) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(m.held, prometheus.GaugeValue, float64(m.b.held.Load()))
	ch <- prometheus.MustNewConstMetric(m.evictions, prometheus.CounterValue, float64(m.b.evictions.Load()))
	ch <- prometheus.MustNewConstMetric(m.budget, prometheus.GaugeValue, float64(m.b.budget))
}
