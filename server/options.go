package server

import (
	"context"
	"crypto/tls"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/loader/logindex"
	"github.com/txnscope/txnscope/loader/segsum"
)

// Options are what a Server serves and within which limits. Each field but
// the last group is a flag of `txnscope serve`, named in its comment;
// DefaultOptions holds the flags' defaults. Every limit has a default that
// a production broker's log.dirs entry fits in (thousands of partitions,
// opened lazily: logindex), and New's error for a bad value names the flag.
// Uploads, the input a stranger can send, keep their own tight limits.
type Options struct {
	// Addr is the listen address (--addr); loopback by default, see
	// ListenPublic.
	Addr string
	// Loads are the log directories, partition directories, segments,
	// captures or dump texts served beside the demos (--load, repeatable),
	// as sources load1, load2, … in this order.
	Loads []string
	// Big also offers the generated 1M-batch demo, built on its first
	// request (--big).
	Big bool
	// AllowedOrigins are the origins (https://host[:port]) whose pages may
	// embed the timeline in an iframe, besides the server itself
	// (--allowed-origin, repeatable).
	AllowedOrigins []string

	// MaxSources is the most partitions served at once: demos, uploads and
	// every partition a --load lists; a listed partition costs about 1 KB
	// until opened (--max-sources).
	MaxSources int
	// MaxSourceBytes is the most bytes of files one partition may hold to
	// be opened in full; for a --load PATH that is not a log directory,
	// the whole PATH. Checked before reading; a partition directory over
	// it is drawn segment by segment (--max-source-bytes).
	MaxSourceBytes int64
	// MaxSourceBatches is the most batches one partition opened in full
	// may hold, txnindex.LogBytes of memory each (--max-source-batches).
	MaxSourceBatches int
	// MaxOpenFiles is the most segment files open at once to decode
	// records (--max-open-files).
	MaxOpenFiles int
	// WSMaxMessage is the largest websocket message a client may send, in
	// bytes; a larger one closes the stream with 1008 (--ws-max-message).
	WSMaxMessage int
	// WSRate is the websocket messages per second a client may send on
	// average; faster closes the stream with 1008 (--ws-rate).
	WSRate float64
	// WSBurst is the websocket messages a client may send in a burst
	// above WSRate (--ws-burst).
	WSBurst int
	// RequestTimeout is the longest an HTTP request may take, the
	// websocket stream aside; 0: none (--request-timeout).
	RequestTimeout time.Duration
	// ReadTimeout is the longest a client may take to send a request,
	// headers and body (--read-timeout).
	ReadTimeout time.Duration
	// IdleTimeout is how long an idle keep-alive connection is kept
	// (--idle-timeout).
	IdleTimeout time.Duration
	// MaxHeaderBytes is the largest request header block, in bytes; a
	// larger one is answered 431 (--max-header-bytes).
	MaxHeaderBytes int
	// ShutdownGrace is how long in-flight requests and websocket close
	// frames get once Run's context ends (--shutdown-grace).
	ShutdownGrace time.Duration
	// ListenPublic allows Addr to be a non-loopback address, with a
	// warning on Stderr (--listen-public; see AuthTokenFile).
	ListenPublic bool
	// AuthTokenFile names a file holding a bearer token every HTTP request
	// and websocket must carry; "" for none (--auth-token-file).
	AuthTokenFile string
	// MaxUploadBytes is the largest file the index page (POST
	// /api/v1/uploads) accepts, kept in memory only; 0 disables uploads
	// (--max-upload-bytes).
	MaxUploadBytes int64
	// MinUploadRate is the slowest an upload's body may arrive, in bytes
	// per second on average after MinUploadGrace; slower uploads are
	// dropped with 408; 0: no minimum (--min-upload-rate).
	MinUploadRate int64
	// MinUploadGrace is how long an upload may arrive at any rate before
	// MinUploadRate applies (--min-upload-grace).
	MinUploadGrace time.Duration
	// MaxUploadMemory is the most memory the kept uploads may hold
	// together (their kept bytes and decoded batches, txnindex.LogBytes
	// each: load.Cost), the oldest evicted past it; an upload alone over
	// it is refused with 413; 0: no bound (--max-upload-memory).
	MaxUploadMemory int64
	// MaxUploads is the most uploaded files served at once; the oldest
	// upload is evicted to make room, never a demo or a load
	// (--max-uploads).
	MaxUploads int
	// MaxMemory is the memory for what the server keeps of partitions:
	// the partitions of a log or partition directory opened whole (or
	// their tails), the segments scanned for the segment routes
	// (…/segments, …/window) and the stream's kept encodings hold at most
	// half together, each kind's least recently used first out, the rest
	// is the garbage collector's headroom; a partition whose whole load
	// would take more than a quarter is drawn one segment at a time
	// (--max-memory; catalog_lazy_budget.go).
	MaxMemory int64
	// SummaryCacheDir is the directory for the per-segment summaries of
	// the segment routes, so that a restart need not rescan; never the
	// log dir; "": memory only (--summary-cache-dir).
	SummaryCacheDir string

	// Bootstrap also serves a live cluster, read-only: HOST:PORT[,…]
	// (--bootstrap). With Topic, that topic's partitions' timelines;
	// without, every partition ranked by LSO lag (docs/cluster-mode.md).
	Bootstrap string
	// Topic is the topic to watch, with Bootstrap (--topic).
	Topic string
	// Partitions are the partitions of Topic to watch; nil: all
	// (--partition, comma-separated).
	Partitions []int32
	// From starts a watched partition's window at this offset; -1: not set
	// (--from).
	From int64
	// Last starts the window this many offsets below the high watermark;
	// 0: not set (--last).
	Last int64
	// MaxBatches is the batches kept per watched partition, older ones
	// dropped; it bounds memory, txnindex.LogBytes a batch (--max-batches).
	MaxBatches int
	// Poll is the interval between polls of a watched topic, or without
	// Topic between cluster scans; 0: live.DefaultPoll, and
	// live.DefaultScanPoll for the scans (--poll).
	Poll time.Duration
	// MaxTxnTimeout is transaction.max.timeout.ms for the hanging rule;
	// 0: ask the broker, else 15m (--max-transaction-timeout).
	MaxTxnTimeout time.Duration
	// DialTimeout bounds connecting and each request to the cluster
	// (--dial-timeout).
	DialTimeout time.Duration
	// SASL authenticates to the cluster; nil: none (--sasl-mechanism,
	// --sasl-user, and the password from --sasl-password-file or
	// $TXNSCOPE_SASL_PASSWORD, which the command reads).
	SASL *live.SASL
	// TLS connects to the cluster with TLS; nil: plain (--tls, --tls-ca,
	// --tls-cert, --tls-key, --tls-server-name, which the command builds
	// it from).
	TLS *tls.Config
	// Record writes the fetch responses a watched topic's polls receive to
	// this file, a raw capture to replay with --load; "": none (--record).
	Record string

	// The fields below are no flags: they are how a program embeds the
	// server.

	// Stdout gets the address served and the sources listed when Run
	// listens, Stderr the warnings and notes of loading and the progress
	// line of a log directory's ranking (on a terminal only). Nil
	// discards them.
	Stdout, Stderr io.Writer
	// Listening, if set, is told the address Run listens on, once it does.
	Listening func(addr string)
	// Now is the pages' clock; nil is time.Now. Tests fix it, so that a
	// page aged by the server's clock looks the same on every run.
	Now func() time.Time
	// OpenFull, if set, opens a listed partition in full (of a log
	// directory, or a partition directory over the limits) when its page
	// is first asked for, in place of d.Open (load.LogDir.Open: whole,
	// within MaxSourceBytes and MaxSourceBatches), which it may call: a
	// program embedding the server can meter or queue the loads, and the
	// browser tests hold one to see a page drawn from the tail while its
	// load runs. Until it returns, requests get the partition's tail.
	OpenFull func(ctx context.Context, d *load.LogDir, e *logindex.Entry) (*input.Contents, error)
	// Opened are inputs the caller has opened itself (input.Open, or a
	// partition built in memory), served whole after the loads: not
	// through the load policy a --load goes through, which lists a log
	// directory lazily and draws a partition over the limits segment by
	// segment.
	Opened []Opened
}

// Opened is one of Options.Opened: the partitions Contents holds, served
// as source ID, titled as a --load of Path is (the name and the kind), or
// Title when Path is "". Index instead of Contents is a log directory the
// caller has listed (logindex.List): served lazily as a --load of it is,
// ranked when the caller starts its ranking (Index.Start).
type Opened struct {
	ID, Path, Title string
	Contents        *input.Contents
	Index           *logindex.Index
}

// DefaultOptions are the defaults of `txnscope serve`'s flags.
func DefaultOptions() Options {
	return Options{
		Addr:             "127.0.0.1:8080",
		Big:              true,
		MaxSources:       100_000,
		MaxSourceBytes:   64 << 30,
		MaxSourceBatches: 100_000_000,
		MaxOpenFiles:     64,
		WSMaxMessage:     4096,
		WSRate:           50,
		WSBurst:          100,
		RequestTimeout:   2 * time.Minute,
		ReadTimeout:      30 * time.Second,
		IdleTimeout:      2 * time.Minute,
		MaxHeaderBytes:   64 << 10,
		ShutdownGrace:    5 * time.Second,
		MaxUploadBytes:   256 << 20,
		MinUploadRate:    64 << 10,
		MinUploadGrace:   10 * time.Second,
		MaxUploadMemory:  1 << 30,
		MaxUploads:       16,
		MaxMemory:        segsum.DefaultMaxMemory(),
		SummaryCacheDir:  defaultSummaryCache(),
		From:             -1,
		MaxBatches:       live.DefaultMaxBatches,
		DialTimeout:      live.DefaultDialTimeout,
	}
}

// liveConfig checks the live options and builds the watcher's
// configuration of topic's partitions (nil: all) from last offsets below
// the high watermark (0: Options.From, else live's default), without
// Record, which startLive opens.
func (o *Options) liveConfig(topic string, partitions []int32, last int64) (live.Config, error) {
	if o.Bootstrap == "" || topic == "" {
		return live.Config{}, usagef("--bootstrap and --topic are required")
	}
	if o.From >= 0 && last > 0 {
		return live.Config{}, usagef("--from and --last exclude each other")
	}
	if last < 0 {
		return live.Config{}, usagef("--last must be positive")
	}
	return live.Config{From: o.From, Last: last, MaxBatches: o.MaxBatches, Poll: o.Poll, MaxTxnTimeout: o.MaxTxnTimeout,
		Topic: topic, Partitions: partitions, Brokers: live.SplitBrokers(o.Bootstrap),
		DialTimeout: o.DialTimeout, SASL: o.SASL, TLS: o.TLS}, nil
}

// defaultSummaryCache is SummaryCacheDir's default: txnscope's directory
// in the user's cache directory, "" when there is none.
func defaultSummaryCache() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "txnscope")
}
