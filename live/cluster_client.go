package live

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultScanPoll is the interval of Cluster.Run when Config.Poll is 0: a
// scan costs the cluster a few requests per broker, but their answers grow
// with the partitions (a ListOffsets of every partition a broker leads),
// and an LSO that lags for seconds is not yet news.
const DefaultScanPoll = 5 * time.Second

// Cluster is a read-only connection for cluster scans (`diagnose
// --bootstrap` and `serve --bootstrap` without a topic). It connects as the
// watcher does (Config's Brokers, TLS, SASL, DialTimeout); the Topic,
// window and Record fields are not used.
type Cluster struct {
	cfg  Config
	cl   *kgo.Client
	auth *saslHook

	mu    sync.Mutex
	known []BrokerStatus // the brokers of the last scan that succeeded
}

// NewCluster builds the client; nothing is sent until Scan, whose errors
// say whether the cluster is unreachable, the credentials wrong or the TLS
// handshake refused.
func NewCluster(cfg Config) (*Cluster, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("live: no bootstrap broker given")
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultScanPoll
	}
	// The same client as Dial's (newClient): bounded retries, no KIP-714
	// telemetry, TLS and SASL as configured.
	cl, hook, err := newClient(cfg, "txnscope-cluster")
	if err != nil {
		return nil, err
	}
	return &Cluster{cfg: cfg, cl: cl, auth: hook}, nil
}

// Client is the kgo client, for single-partition requests beside the scan.
func (c *Cluster) Client() *kgo.Client { return c.cl }

// Close closes the connections.
func (c *Cluster) Close() { c.cl.Close() }

// Bootstrap is the comma-separated bootstrap list.
func (c *Cluster) Bootstrap() string { return strings.Join(c.cfg.Brokers, ",") }

// Scan scans the cluster once (ScanCluster). Options left zero take the
// connection's: the bootstrap list for the printed commands,
// Config.MaxTxnTimeout, DialTimeout as the per-request bound, Config.Now.
// A failed Metadata request gives an error wrapping ErrUnreachable,
// ErrAuth, ErrTLS or ErrDenied.
func (c *Cluster) Scan(ctx context.Context, o ScanOptions) (*ClusterScan, error) {
	if o.Bootstrap == "" {
		o.Bootstrap = c.Bootstrap()
	}
	if o.MaxTxnTimeout <= 0 {
		o.MaxTxnTimeout = c.cfg.MaxTxnTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = c.cfg.DialTimeout
	}
	if o.Now == nil {
		o.Now = c.cfg.Now
	}
	o.seeds = c.cfg.Brokers
	c.mu.Lock()
	o.known = c.known
	c.mu.Unlock()
	s, err := ScanCluster(ctx, c.cl, o)
	if err == nil {
		c.mu.Lock()
		c.known = s.Brokers
		c.mu.Unlock()
	}
	if err != nil {
		// The watcher's classification, which reads only the
		// connection's configuration and SASL hook.
		return nil, (&Watcher{cfg: c.cfg, auth: c.auth}).classify(err, "Metadata")
	}
	return s, nil
}

// Run scans every Config.Poll (DefaultScanPoll if 0) until ctx ends or an error that retrying
// cannot fix (authentication, TLS, ACL), calling fn with each scan or the
// error of a failed one (then the next waits with backoff from 200 ms to
// 5 s, as the watcher's Run does).
func (c *Cluster) Run(ctx context.Context, o ScanOptions, fn func(*ClusterScan, error)) error {
	backoff := time.Duration(0)
	for {
		s, err := c.Scan(ctx, o)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := c.cfg.Poll
		if err != nil {
			if fatal(err) {
				return err
			}
			backoff = nextBackoff(backoff)
			wait = backoff
		} else {
			backoff = 0
		}
		fn(s, err)
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}
