// Package live watches the partitions of one topic on a running Kafka
// cluster, strictly read-only, and shows what txnscope's engine decides next
// to what the broker itself answers.
//
// Every request it sends is one of Metadata, ListOffsets, Fetch,
// DescribeProducers, ListTransactions, DescribeTransactions,
// DescribeConfigs, and, while an LSO lags, ListGroups and OffsetFetch (as
// an admin, for the groups it holds up), ConsumerGroupDescribe for KIP-848
// consumer groups and DescribeShareGroupOffsets for KIP-932 share groups
// (plus the ApiVersions and SASL
// handshakes a connection needs). It never joins a group, commits offsets, initialises a producer or
// writes: it issues raw kmsg requests through kgo.Client's Broker handles
// rather than kgo's consumer, which would send FindCoordinator,
// OffsetForLeaderEpoch and others, and it turns off KIP-714 client metrics,
// which kgo would otherwise push with GetTelemetrySubscriptions and
// PushTelemetry.
//
// Each poll fetches read_uncommitted from the window start to the high
// watermark, so that the engine sees every batch (markers included), and
// read_committed as a tailing consumer would, to obtain the broker's own last
// stable offset and aborted-transaction lists. The two are compared: any
// difference ends up in Update.Mismatches.
package live

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader/capture"
)

// SASL mechanisms Config.SASL accepts, spelled as Kafka's sasl.mechanism.
const (
	MechanismPlain       = "PLAIN"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
)

// SASL is the authentication of the connections. Password is never logged,
// printed or put in an error.
type SASL struct {
	Mechanism string // PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (case-insensitive)
	User      string
	Password  string
}

// String hides the password, so that printing a Config cannot leak it.
func (s SASL) String() string { return fmt.Sprintf("%s user %q", s.Mechanism, s.User) }

// GoString is String, for %#v.
func (s SASL) GoString() string { return s.String() }

// Defaults of Config.
const (
	DefaultMaxBatches  = 50_000
	DefaultPoll        = 250 * time.Millisecond
	DefaultDialTimeout = 5 * time.Second
)

// SplitBrokers is the brokers of a HOST:PORT[,HOST:PORT] list, as
// --bootstrap takes them (Config.Brokers): blanks around each dropped, empty
// entries skipped.
func SplitBrokers(s string) []string {
	var out []string
	for _, b := range strings.Split(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// Config says what to watch and how to connect.
type Config struct {
	Brokers    []string
	Topic      string
	Partitions []int32 // nil: every partition of the topic

	// From is the first offset of the window, -1 for none. Last, when
	// From is -1 and Last > 0, starts the window Last offsets below the
	// high watermark. With neither, the window starts at the log start.
	From int64
	Last int64

	// MaxBatches bounds the batches kept per partition (memory is
	// txnindex.LogBytes a batch, as a load's): beyond it the oldest are
	// dropped and the window start moves up. 0 means DefaultMaxBatches.
	MaxBatches int

	TLS  *tls.Config
	SASL *SASL

	// Record, when set, receives every Fetch exchange (and the Metadata
	// that names topic ids) in the raw capture format of
	// docs/capture-format.md, replayable with --load.
	Record io.Writer

	Poll        time.Duration // 0 means DefaultPoll
	DialTimeout time.Duration // bounds Dial and each request; 0 means DefaultDialTimeout

	// MaxTxnTimeout is transaction.max.timeout.ms for the KIP-664 rule;
	// 0 asks the leader with DescribeConfigs and falls back to Kafka's
	// default of 15 minutes.
	MaxTxnTimeout time.Duration
	// Now is the clock transaction ages are measured against; nil is
	// time.Now.
	Now func() time.Time
}

// Error kinds Dial and Run return, for errors.Is.
var (
	ErrUnreachable  = errors.New("cluster unreachable")
	ErrAuth         = errors.New("authentication failed")
	ErrTopicMissing = errors.New("topic does not exist")
	ErrDenied       = errors.New("not authorized")
	ErrTLS          = errors.New("TLS handshake failed")
	// ErrCutAnswer: the broker closed the connection partway through an
	// answer. Retried, as the cut may be a restart or a proxy.
	ErrCutAnswer = errors.New("answer cut short")
)

// Watcher is a connection to a cluster watching one topic. Run polls it; it
// is not safe for concurrent use.
type Watcher struct {
	cfg       Config
	cl        *kgo.Client
	topicID   [16]byte
	parts     []*partState
	rec       *capture.RawWriter
	corr      int32
	maxTxn    time.Duration
	maxTxnSrc string
	seq       int
	notes     []string
	auth      *saslHook
	group     watchedGroups // the consumer groups' last read (groups.go)
	brokers   []int32       // every broker of the last Metadata answer

	// Per-fetch and per-poll bounds; tests lower them to force catch-up.
	maxBytes       int32
	fetchesPerPoll int
}

// saslHook notices a connection that dies while reading a SASL response.
// Kafka answers bad credentials with SASL_AUTHENTICATION_FAILED and then
// closes the connection, but some brokers (kfake among them) just close it,
// which kgo reports as a bare EOF: without this the error would read as an
// unreachable cluster.
type saslHook struct{ failed atomic.Bool }

// OnBrokerRead implements kgo.HookBrokerRead.
func (h *saslHook) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == int16(kmsg.SASLAuthenticate) || key == int16(kmsg.SASLHandshake) {
		h.failed.Store(err != nil)
	}
}

// newClient builds the read-only client of the watcher and of cluster
// scans from cfg's Brokers, DialTimeout, TLS and SASL, with the SASL hook
// that lets their errors say whether the credentials were refused.
func newClient(cfg Config, clientID string) (*kgo.Client, *saslHook, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID(clientID),
		kgo.DialTimeout(cfg.DialTimeout),
		// Bounded retries: a dead cluster must give an error, not a hang.
		kgo.RequestRetries(2),
		kgo.RetryTimeout(cfg.DialTimeout),
		kgo.RetryBackoffFn(func(n int) time.Duration { return min(time.Duration(n)*100*time.Millisecond, time.Second) }),
		// KIP-714 metrics would send GetTelemetrySubscriptions and
		// PushTelemetry: not on the read-only list.
		kgo.DisableClientMetrics(),
		kgo.MetadataMinAge(time.Second),
	}
	if cfg.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(cfg.TLS))
	}
	if cfg.SASL != nil {
		m, err := mechanism(*cfg.SASL)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	hook := &saslHook{}
	opts = append(opts, kgo.WithHooks(hook))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("live: %w", err)
	}
	return cl, hook, nil
}

// Dial connects, checks the credentials and the topic, and positions the
// window. It fails within about twice DialTimeout with an error wrapping
// one of ErrUnreachable, ErrAuth, ErrTLS, ErrTopicMissing or ErrDenied,
// rather than letting kgo retry forever.
func Dial(ctx context.Context, cfg Config) (*Watcher, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("live: no bootstrap broker given")
	}
	if cfg.Topic == "" {
		return nil, errors.New("live: no topic given")
	}
	if cfg.MaxBatches <= 0 {
		cfg.MaxBatches = DefaultMaxBatches
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cl, hook, err := newClient(cfg, "txnscope-live")
	if err != nil {
		return nil, err
	}
	w := &Watcher{cfg: cfg, cl: cl, auth: hook, maxBytes: defaultPartitionMaxBytes, fetchesPerPoll: defaultFetchesPerPoll}
	if cfg.Record != nil {
		w.rec = capture.NewRawWriter(cfg.Record)
	}
	if err := w.start(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	return w, nil
}

func mechanism(s SASL) (sasl.Mechanism, error) {
	switch strings.ToUpper(s.Mechanism) {
	case MechanismPlain:
		return plain.Auth{User: s.User, Pass: s.Password}.AsMechanism(), nil
	case MechanismSCRAMSHA256:
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism(), nil
	case MechanismSCRAMSHA512:
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("live: unknown SASL mechanism %q (want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)", s.Mechanism)
}

// Close closes the connections and flushes the recording.
func (w *Watcher) Close() error {
	w.cl.Close()
	if w.rec != nil {
		return w.rec.Flush()
	}
	return nil
}

// Bootstrap is the comma-separated bootstrap list, for commands.
func (w *Watcher) Bootstrap() string { return strings.Join(w.cfg.Brokers, ",") }

// start loads metadata, checks the partitions, reads the broker's
// transaction.max.timeout.ms and positions each partition's window.
func (w *Watcher) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*w.cfg.DialTimeout)
	defer cancel()
	if err := w.metadata(ctx); err != nil {
		return err
	}
	w.maxTxn, w.maxTxnSrc = w.cfg.MaxTxnTimeout, "configured"
	if w.maxTxn <= 0 {
		w.maxTxn, w.maxTxnSrc = w.describeMaxTxnTimeout(ctx)
	}
	for _, p := range w.parts {
		if err := w.position(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// metadata issues a Metadata request for the topic only, never asking for
// auto-creation (a read-only tool must not create a topic by looking at it),
// and maps partitions to leaders.
func (w *Watcher) metadata(ctx context.Context) error {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(w.cfg.Topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = false
	kresp, err := w.cl.Request(ctx, req)
	if err != nil {
		return w.classify(err, "Metadata")
	}
	resp := kresp.(*kmsg.MetadataResponse)
	w.record(req, resp, "metadata")
	if len(resp.Topics) != 1 {
		return fmt.Errorf("live: Metadata for topic %q returned %d topics", w.cfg.Topic, len(resp.Topics))
	}
	t := &resp.Topics[0]
	if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
		switch {
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			return fmt.Errorf("live: topic %q: %w on %s (Metadata answered UNKNOWN_TOPIC_OR_PARTITION)", w.cfg.Topic, ErrTopicMissing, w.Bootstrap())
		case errors.Is(err, kerr.TopicAuthorizationFailed):
			return fmt.Errorf("live: topic %q: %w: the ACLs deny Describe on the topic (TOPIC_AUTHORIZATION_FAILED)", w.cfg.Topic, ErrDenied)
		}
		return fmt.Errorf("live: Metadata for topic %q: %w", w.cfg.Topic, err)
	}
	w.topicID = t.TopicID
	w.brokers = w.brokers[:0]
	for _, b := range resp.Brokers {
		w.brokers = append(w.brokers, b.NodeID)
	}
	slices.Sort(w.brokers)
	leaders := map[int32]int32{}
	for _, p := range t.Partitions {
		leaders[p.Partition] = p.Leader
	}
	if w.parts == nil {
		want := w.cfg.Partitions
		if want == nil {
			for _, p := range t.Partitions {
				want = append(want, p.Partition)
			}
		}
		for _, id := range want {
			if _, ok := leaders[id]; !ok {
				return fmt.Errorf("live: topic %q has no partition %d (it has %d): %w", w.cfg.Topic, id, len(t.Partitions), ErrTopicMissing)
			}
			w.parts = append(w.parts, &partState{id: id, rcPos: -1})
		}
		sortParts(w.parts)
	}
	for _, p := range w.parts {
		p.leader = leaders[p.id]
	}
	return nil
}

// classify turns a kgo error into one a person can act on.
func (w *Watcher) classify(err error, api string) error {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case w.cfg.SASL != nil && w.auth.failed.Load():
		return fmt.Errorf("live: %w with %s at %s: the broker closed the connection during SASL authentication (%v); check the user, password and mechanism",
			ErrAuth, w.cfg.SASL, w.Bootstrap(), err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		// The answer's size arrived and then not all of its bytes: the
		// broker or something between it and us cut it. kgo words a cut
		// first answer on a connection as "is SASL missing?", but a
		// broker that wants SASL closes before answering anything.
		return fmt.Errorf("live: %w: the broker at %s closed the connection partway through its %s answer (%v)", ErrCutAnswer, w.Bootstrap(), api, io.ErrUnexpectedEOF)
	case errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.IllegalSaslState), errors.Is(err, kerr.UnsupportedSaslMechanism):
		who := "without credentials"
		if w.cfg.SASL != nil {
			who = w.cfg.SASL.String()
		}
		return fmt.Errorf("live: %w with %s at %s: %v", ErrAuth, who, w.Bootstrap(), err)
	case isTLS(err):
		return fmt.Errorf("live: %w with %s: %v", ErrTLS, w.Bootstrap(), err)
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed), errors.Is(err, kerr.TransactionalIDAuthorizationFailed):
		return fmt.Errorf("live: %s: %w: %v", api, ErrDenied, err)
	case errors.As(err, &ne), errors.Is(err, context.DeadlineExceeded), errors.Is(err, kgo.ErrClientClosed):
		return fmt.Errorf("live: %w: %s to %s: %v", ErrUnreachable, api, w.Bootstrap(), err)
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return fmt.Errorf("live: %s: %w", api, err)
	}
	// Dial failures (refused, no route, TLS handshake) reach here wrapped
	// in kgo's own types.
	return fmt.Errorf("live: %w: %s to %s: %v", ErrUnreachable, api, w.Bootstrap(), err)
}

// isTLS reports a certificate or handshake error: retrying will not fix it.
func isTLS(err error) bool {
	var (
		alert  tls.AlertError
		header tls.RecordHeaderError
		verify *tls.CertificateVerificationError
		ua     x509.UnknownAuthorityError
		host   x509.HostnameError
		inv    x509.CertificateInvalidError
	)
	if errors.As(err, &alert) || errors.As(err, &header) || errors.As(err, &verify) ||
		errors.As(err, &ua) || errors.As(err, &host) || errors.As(err, &inv) {
		return true
	}
	// An alert from the peer ("remote error: tls: certificate required")
	// is a net.OpError around an unexported crypto/tls type.
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "remote error" || strings.Contains(err.Error(), "tls: ")
}

// fatal reports whether an error must stop Run rather than be retried.
func fatal(err error) bool {
	return errors.Is(err, ErrAuth) || errors.Is(err, ErrTLS) || errors.Is(err, ErrDenied) || errors.Is(err, ErrTopicMissing) || errors.Is(err, context.Canceled)
}

// describeMaxTxnTimeout asks a broker for transaction.max.timeout.ms, the
// bound KIP-664's find-hanging compares against. DescribeConfigs needs
// DESCRIBE_CONFIGS on the cluster; without it Kafka's default is used.
func (w *Watcher) describeMaxTxnTimeout(ctx context.Context) (time.Duration, string) {
	if len(w.parts) == 0 {
		return diagnosis.DefaultMaxTxnTimeout, "default"
	}
	leader := w.parts[0].leader
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(leader))
	rr.ConfigNames = []string{"transaction.max.timeout.ms"}
	req.Resources = append(req.Resources, rr)
	kresp, err := w.cl.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		w.notes = append(w.notes, fmt.Sprintf("DescribeConfigs failed (%v): using Kafka's default transaction.max.timeout.ms of 15m", err))
		return diagnosis.DefaultMaxTxnTimeout, "default"
	}
	resp := kresp.(*kmsg.DescribeConfigsResponse)
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			w.notes = append(w.notes, fmt.Sprintf("DescribeConfigs on broker %d: %v: using Kafka's default transaction.max.timeout.ms of 15m", leader, err))
			return diagnosis.DefaultMaxTxnTimeout, "default"
		}
		for _, c := range r.Configs {
			if c.Name == "transaction.max.timeout.ms" && c.Value != nil {
				if ms, err := strconv.ParseInt(*c.Value, 10, 64); err == nil && ms > 0 {
					return time.Duration(ms) * time.Millisecond, fmt.Sprintf("broker %d", leader)
				}
			}
		}
	}
	return diagnosis.DefaultMaxTxnTimeout, "default"
}

// record writes one exchange to the raw capture. kgo hands back decoded
// messages, so bodies are re-encoded with the version kgo negotiated;
// record batches are kept as the broker's bytes. The connection name keeps
// read_committed and read_uncommitted fetches apart, so that a replay
// groups each consumer's responses on their own.
func (w *Watcher) record(req kmsg.Request, resp kmsg.Response, conn string) {
	if w.rec == nil {
		return
	}
	w.corr++
	e := capture.RawExchange{
		Time: time.Now(), APIKey: req.Key(), APIVersion: req.GetVersion(), CorrelationID: w.corr,
		Connection: "txnscope-live " + conn + " -> " + w.Bootstrap(),
		Request:    req.AppendTo(nil), Response: resp.AppendTo(nil),
	}
	if err := w.rec.Write(e); err != nil && len(w.notes) < 16 {
		w.notes = append(w.notes, "recording: "+err.Error())
	}
}
