// Command loadtest puts a running txnscope server under load on loopback:
// N websocket clients that each stream a partition's decisions from meta to
// done again and again (checking that done's count equals the decisions
// received), and a fixed rate of API requests (sources, partitions,
// diagnosis, a batch, a small decisions range), for a bounded time. It
// prints the API latency percentiles, the errors (any is a failure, exit
// 1), the streams completed and, with -pid, the server's peak RSS.
//
//	go run ./cmd/server --addr 127.0.0.1:18080 &
//	go run ./scripts/loadtest -url http://127.0.0.1:18080 -clients 200 -rps 50 -duration 60s -pid $!
//
// It is not a test: it takes a minute and its figures depend on the machine.
// TestLoadShort runs a small version of it in CI against a built server.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

func main() {
	var (
		base     = flag.String("url", "http://127.0.0.1:8080", "the server")
		source   = flag.String("source", "big", "source id")
		topic    = flag.String("topic", "demo-big", "topic")
		clients  = flag.Int("clients", 200, "websocket clients")
		rps      = flag.Int("rps", 50, "API requests per second")
		duration = flag.Duration("duration", 60*time.Second, "how long")
		pid      = flag.Int("pid", 0, "server process id, for its peak RSS")
		nonread  = flag.Int("nonreaders", 0, "instead of the load: time -probes full streams alone, then with this many websocket clients connected that never read, in the same run")
		probes   = flag.Int("probes", 7, "streams timed in each phase of -nonreaders")
	)
	flag.Parse()
	if *nonread > 0 {
		if err := probeNonReaders(*base, *source, *topic, *nonread, *probes); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	r := run(*base, *source, *topic, *clients, *rps, *duration)
	fmt.Print(r.String())
	if *pid > 0 {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", *pid)); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "VmHWM") || strings.HasPrefix(l, "VmRSS") {
					fmt.Println("server", strings.Join(strings.Fields(l), " "))
				}
			}
		}
	}
	if r.Errors() > 0 {
		os.Exit(1)
	}
}

// result is what a run measured.
type result struct {
	mu        sync.Mutex
	latencies []time.Duration
	byKind    map[string][]time.Duration // latencies per endpoint
	notFound  int                        // batches/{offset} on an offset no batch holds (a gap): the documented 404
	apiErrs   []string
	wsErrs    []string
	streams   atomic.Int64
	decisions atomic.Int64
	elapsed   time.Duration
}

func (r *result) Errors() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.apiErrs) + len(r.wsErrs)
}

func (r *result) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := slices.Clone(r.latencies)
	slices.Sort(l)
	pct := func(p float64) time.Duration {
		if len(l) == 0 {
			return 0
		}
		return l[min(len(l)-1, int(p*float64(len(l))))]
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "elapsed %v: %d API requests (p50 %v, p99 %v, max %v), %d API errors\n",
		r.elapsed.Round(time.Millisecond), len(l), pct(0.50), pct(0.99), pct(1), len(r.apiErrs))
	kinds := make([]string, 0, len(r.byKind))
	for k := range r.byKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		kl := slices.Clone(r.byKind[k])
		slices.Sort(kl)
		fmt.Fprintf(&sb, "  %-12s %5d requests, p50 %v, p99 %v\n", k, len(kl), kl[len(kl)/2], kl[min(len(kl)-1, len(kl)*99/100)])
	}
	if r.notFound > 0 {
		fmt.Fprintf(&sb, "  %d batch requests fell in a gap of the log (404 no batch holds offset, counted as answered)\n", r.notFound)
	}
	fmt.Fprintf(&sb, "%d complete streams, %d decisions received, %d websocket errors\n", r.streams.Load(), r.decisions.Load(), len(r.wsErrs))
	for i, e := range append(r.apiErrs, r.wsErrs...) {
		if i == 10 {
			fmt.Fprintf(&sb, "  ... %d more\n", len(r.apiErrs)+len(r.wsErrs)-10)
			break
		}
		fmt.Fprintf(&sb, "  error: %s\n", e)
	}
	return sb.String()
}

func (r *result) apiErr(s string) { r.mu.Lock(); r.apiErrs = append(r.apiErrs, s); r.mu.Unlock() }
func (r *result) wsErr(s string)  { r.mu.Lock(); r.wsErrs = append(r.wsErrs, s); r.mu.Unlock() }

// run is the load: clients streaming until the deadline, and rps API
// requests per second meanwhile.
func run(base, source, topic string, clients, rps int, d time.Duration) *result {
	r := &result{}
	start := time.Now()
	deadline := start.Add(d)
	part := fmt.Sprintf("/api/v1/sources/%s/partitions/%s/0", source, topic)
	hc := &http.Client{Timeout: 30 * time.Second}
	// The log end, for random batch offsets.
	end := int64(1)
	if resp, err := hc.Get(base + part + "/diagnosis"); err == nil {
		var d struct {
			LogEnd int64 `json:"log_end_offset"`
		}
		json.NewDecoder(resp.Body).Decode(&d)
		resp.Body.Close()
		end = max(d.LogEnd, 1)
	} else {
		r.apiErr(err.Error())
		return r
	}
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if !stream(r, base, source, topic, deadline) {
					return
				}
			}
		}()
	}
	paths := []func() string{
		func() string { return "/api/v1/sources" },
		func() string { return "/api/v1/sources/" + source + "/partitions" },
		func() string { return part + "/diagnosis" },
		func() string { return fmt.Sprintf("%s/batches/%d", part, rand.Int64N(end)) },
		func() string { o := rand.Int64N(end); return fmt.Sprintf("%s/decisions?from=%d&to=%d", part, o, o+100) },
	}
	// The requests due are counted from the start rather than one per
	// tick: with 200 stream readers runnable on two cores, this goroutine
	// is scheduled far less often than every 20 ms, and a ticker drops the
	// ticks it missed, so the rate would silently fall (it fell to 7/s).
	tick := time.NewTicker(time.Second / time.Duration(max(rps, 1)))
	defer tick.Stop()
	var reqs sync.WaitGroup
	apiStart := time.Now()
	for i := 0; time.Now().Before(deadline); {
		<-tick.C
		due := int(time.Since(apiStart) * time.Duration(rps) / time.Second)
		for ; i < due; i++ {
			reqs.Add(1)
			go r.request(hc, base, paths[i%len(paths)](), &reqs)
		}
	}
	reqs.Wait()
	wg.Wait()
	r.elapsed = time.Since(start)
	return r
}

// request makes one API request and records its latency or error.
func (r *result) request(hc *http.Client, base, p string, reqs *sync.WaitGroup) {
	defer reqs.Done()
	t0 := time.Now()
	resp, err := hc.Get(base + p)
	if err != nil {
		r.apiErr(p + ": " + err.Error())
		return
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	lat := time.Since(t0)
	// The random offset of a batch request may fall in a gap of the log;
	// the API's answer is then a 404 naming it, which is correct.
	gap := resp.StatusCode == 404 && strings.Contains(p, "/batches/") && strings.Contains(string(body), "no batch holds offset")
	if gap {
		r.mu.Lock()
		r.notFound++
		r.mu.Unlock()
	}
	if err != nil || (resp.StatusCode != 200 && !gap) {
		r.apiErr(fmt.Sprintf("%s: %s %v", p, resp.Status, err))
		return
	}
	kind := p[strings.LastIndex(p, "/")+1:]
	switch {
	case strings.Contains(p, "/batches/"):
		kind = "batch"
	case strings.Contains(p, "/decisions"):
		kind = "decisions"
	case strings.HasSuffix(p, "/partitions"):
		kind = "partitions"
	}
	r.mu.Lock()
	r.latencies = append(r.latencies, lat)
	if r.byKind == nil {
		r.byKind = map[string][]time.Duration{}
	}
	r.byKind[kind] = append(r.byKind[kind], lat)
	r.mu.Unlock()
}

// stream reads one whole stream; false stops the client (an error).
func stream(r *result, base, source, topic string, deadline time.Time) bool {
	u := "ws" + strings.TrimPrefix(base, "http") + fmt.Sprintf("/ws/v1/sources/%s/partitions/%s/0", source, topic)
	c, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {base}})
	if err != nil {
		r.wsErr("dial: " + err.Error())
		return false
	}
	defer c.Close()
	n := int64(0)
	buf := make([]byte, 32<<10)
	for {
		// A stream started before the deadline is read to its end.
		c.SetReadDeadline(time.Now().Add(5 * time.Minute))
		typ, rd, err := c.NextReader()
		if err != nil {
			r.wsErr(fmt.Sprintf("after %d decisions: %v", n, err))
			return false
		}
		if typ == websocket.BinaryMessage {
			// Only the header counts; the 128 KiB body is discarded
			// through a fixed buffer rather than read into a new slice,
			// so that the generator does not take the cores it shares
			// with the server.
			var h [16]byte
			if _, err := io.ReadFull(rd, h[:]); err != nil {
				r.wsErr(fmt.Sprintf("after %d decisions: short frame: %v", n, err))
				return false
			}
			if _, err := io.CopyBuffer(io.Discard, rd, buf); err != nil {
				r.wsErr(fmt.Sprintf("after %d decisions: %v", n, err))
				return false
			}
			if h[1] == 1 {
				n += int64(binary.LittleEndian.Uint32(h[12:]))
			}
			continue
		}
		b, err := io.ReadAll(rd)
		if err != nil {
			r.wsErr(fmt.Sprintf("after %d decisions: %v", n, err))
			return false
		}
		if typ == websocket.TextMessage && strings.Contains(string(b), `"type":"done"`) {
			var m struct {
				Decisions int64 `json:"decisions"`
			}
			json.Unmarshal(b, &m)
			if m.Decisions != n {
				r.wsErr(fmt.Sprintf("done says %d decisions, received %d", m.Decisions, n))
				return false
			}
			r.streams.Add(1)
			r.decisions.Add(n)
			return true
		}
	}
}

// probeNonReaders times probes full streams with nothing else connected,
// then again with n clients that open the same stream and never read, and
// prints both phases' times: clients that never read must not make a
// stream more than twice as slow as it is without them.
func probeNonReaders(base, source, topic string, n, probes int) error {
	phase := func(name string) ([]time.Duration, error) {
		var ts []time.Duration
		for range probes {
			r := &result{}
			t0 := time.Now()
			if !stream(r, base, source, topic, time.Now().Add(time.Minute)) {
				return nil, fmt.Errorf("%s: %s", name, strings.Join(r.wsErrs, "; "))
			}
			ts = append(ts, time.Since(t0))
			time.Sleep(200 * time.Millisecond) // the same pause in both phases
		}
		slices.Sort(ts)
		fmt.Printf("%-22s %d streams: min %v, median %v, max %v\n", name, len(ts), ts[0].Round(time.Millisecond), ts[len(ts)/2].Round(time.Millisecond), ts[len(ts)-1].Round(time.Millisecond))
		return ts, nil
	}
	// One untimed stream first: the first request builds the source (the
	// 1M demo takes seconds) and the shared encoding.
	if r := (&result{}); !stream(r, base, source, topic, time.Now().Add(time.Minute)) {
		return fmt.Errorf("warm-up: %s", strings.Join(r.wsErrs, "; "))
	}
	alone, err := phase("alone")
	if err != nil {
		return err
	}
	u := "ws" + strings.TrimPrefix(base, "http") + fmt.Sprintf("/ws/v1/sources/%s/partitions/%s/0", source, topic)
	for range n {
		c, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {base}})
		if err != nil {
			return fmt.Errorf("non-reader: %v", err)
		}
		defer c.Close() // never read: its socket buffers fill and the server's writes block
	}
	time.Sleep(2 * time.Second)
	with, err := phase(fmt.Sprintf("with %d non-readers", n))
	if err != nil {
		return err
	}
	fmt.Printf("slowest with / median alone: %.2f\n", float64(with[len(with)-1])/float64(alone[len(alone)/2]))
	return nil
}
