package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/guard"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/web"
)

// hardening is serve's limit and security flags. Every limit has a flag, a
// default that a production broker's log.dirs entry fits in (thousands of
// partitions, opened lazily: logindex), and an error that names the flag.
// Uploads, the input a stranger can send, keep their own tight limits.
type hardening struct {
	maxSources       int
	maxSourceBytes   int64
	maxSourceBatches int
	maxOpenFiles     int
	wsMaxMessage     int
	wsRate           float64
	wsBurst          int
	requestTimeout   time.Duration
	readTimeout      time.Duration
	idleTimeout      time.Duration
	maxHeaderBytes   int
	shutdownGrace    time.Duration
	listenPublic     bool
	authTokenFile    string
	maxUploadBytes   int64
	minUploadRate    int64
	maxUploadMemory  int64
	minUploadGrace   time.Duration
	maxUploads       int
}

func addHardeningFlags(fs *flag.FlagSet) *hardening {
	h := &hardening{}
	fs.IntVar(&h.maxSources, "max-sources", 100_000, "most partitions served at once (demos, uploads and every partition --load lists; a listed partition costs about 1 KB until opened)")
	fs.Int64Var(&h.maxSourceBytes, "max-source-bytes", 64<<30, "most bytes of files one partition may hold to be opened in full (a --load PATH that is not a log directory: the whole PATH); checked before reading")
	fs.IntVar(&h.maxSourceBatches, "max-source-batches", 100_000_000, "most batches one partition opened in full may hold (64 B of memory each)")
	fs.IntVar(&h.maxOpenFiles, "max-open-files", 64, "most segment files open at once to decode records")
	fs.IntVar(&h.wsMaxMessage, "ws-max-message", 4096, "largest websocket message a client may send, in bytes (larger: closed with 1008)")
	fs.Float64Var(&h.wsRate, "ws-rate", 50, "websocket messages per second a client may send on average (faster: closed with 1008)")
	fs.IntVar(&h.wsBurst, "ws-burst", 100, "websocket messages a client may send in a burst above --ws-rate")
	fs.DurationVar(&h.requestTimeout, "request-timeout", 2*time.Minute, "longest an HTTP request may take (not the websocket stream); 0: none")
	fs.DurationVar(&h.readTimeout, "read-timeout", 30*time.Second, "longest a client may take to send a request, headers and body")
	fs.DurationVar(&h.idleTimeout, "idle-timeout", 2*time.Minute, "how long an idle keep-alive connection is kept")
	fs.IntVar(&h.maxHeaderBytes, "max-header-bytes", 64<<10, "largest request header block, in bytes (larger: 431)")
	fs.DurationVar(&h.shutdownGrace, "shutdown-grace", shutdownGrace, "how long in-flight requests and websocket close frames get on SIGINT/SIGTERM")
	fs.BoolVar(&h.listenPublic, "listen-public", false, "allow --addr to be a non-loopback address (prints a warning; see --auth-token-file)")
	fs.StringVar(&h.authTokenFile, "auth-token-file", "", "file holding a bearer token every HTTP request and websocket must carry")
	fs.Int64Var(&h.maxUploadMemory, "max-upload-memory", 1<<30, "most memory the kept uploads may hold together (their kept bytes and decoded batches, 64 B each), the oldest evicted past it; an upload alone over it is refused with 413 (0: no bound)")
	fs.Int64Var(&h.minUploadRate, "min-upload-rate", 64<<10, "slowest an upload's body may arrive, in bytes per second on average after --min-upload-grace; slower uploads are dropped with 408 (0: no minimum)")
	fs.DurationVar(&h.minUploadGrace, "min-upload-grace", 10*time.Second, "how long an upload may arrive at any rate before --min-upload-rate applies")
	fs.Int64Var(&h.maxUploadBytes, "max-upload-bytes", 256<<20, "largest file the index page (POST /api/v1/uploads) accepts, kept in memory only; 0 disables uploads")
	fs.IntVar(&h.maxUploads, "max-uploads", 16, "most uploaded files served at once; the oldest upload is evicted to make room (never the demos or --load)")
	return h
}

// check validates the flag values and the listen address, reads the token,
// and prints the warning a public listener deserves.
func (h *hardening) check(addr string, stderr io.Writer) (*security, error) {
	for _, c := range []struct {
		name string
		v    int64
	}{{"max-sources", int64(h.maxSources)}, {"max-source-bytes", h.maxSourceBytes}, {"max-source-batches", int64(h.maxSourceBatches)},
		{"max-open-files", int64(h.maxOpenFiles)}, {"ws-max-message", int64(h.wsMaxMessage)}, {"ws-burst", int64(h.wsBurst)}, {"max-header-bytes", int64(h.maxHeaderBytes)}} {
		if c.v <= 0 {
			return nil, usagef("--%s must be positive, not %d", c.name, c.v)
		}
	}
	if h.maxUploadBytes < 0 {
		return nil, usagef("--max-upload-bytes must be 0 (no uploads) or positive, not %d", h.maxUploadBytes)
	}
	if h.minUploadRate < 0 || h.minUploadGrace < 0 || h.maxUploadMemory < 0 {
		return nil, usagef("--min-upload-rate, --min-upload-grace and --max-upload-memory must not be negative")
	}
	if h.maxUploads <= 0 {
		return nil, usagef("--max-uploads must be positive, not %d", h.maxUploads)
	}
	if h.wsRate <= 0 {
		return nil, usagef("--ws-rate must be positive, not %g", h.wsRate)
	}
	sec := &security{requestTimeout: h.requestTimeout, checkHost: !h.listenPublic}
	sec.addrHost, _, _ = net.SplitHostPort(addr)
	if h.authTokenFile != "" {
		b, err := os.ReadFile(h.authTokenFile)
		if err != nil {
			return nil, fmt.Errorf("--auth-token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if len(tok) < 16 || strings.ContainsAny(tok, " \t\r\n") {
			// The file's content is never echoed: it is meant to be secret.
			return nil, fmt.Errorf("--auth-token-file %s: want one line of at least 16 characters without spaces", h.authTokenFile)
		}
		if st, err := os.Stat(h.authTokenFile); err == nil && st.Mode().Perm()&0o077 != 0 {
			fmt.Fprintf(stderr, "warning: --auth-token-file %s is readable by other users (mode %v); chmod 600 it\n", h.authTokenFile, st.Mode().Perm())
		}
		sec.token = guard.NewToken(tok)
	}
	public, err := isPublic(addr)
	if err != nil {
		return nil, err
	}
	switch {
	case public && !h.listenPublic:
		return nil, usagef("--addr %s is not a loopback address: anyone who can reach it could read the loaded data; add --listen-public (and --auth-token-file) to mean it", addr)
	case public && sec.token == nil:
		fmt.Fprintf(stderr, "warning: listening on %s, reachable from other machines, WITHOUT a token: anyone who can reach it can read every loaded partition (add --auth-token-file)\n", addr)
	case public:
		fmt.Fprintf(stderr, "warning: listening on %s, reachable from other machines; requests need the token. The server speaks plain HTTP: put TLS in front of it on untrusted networks\n", addr)
	}
	return sec, nil
}

// isPublic reports whether addr listens beyond loopback. An empty host
// (":8080") listens on every interface. A name other than localhost is
// resolved: public if any of its addresses is not loopback.
func isPublic(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, usagef("--addr %q: %v", addr, err)
	}
	if host == "" {
		return true, nil
	}
	if host == "localhost" {
		return false, nil
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return !ip.IsLoopback(), nil
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return false, fmt.Errorf("--addr %s: %w", addr, err)
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return true, nil
		}
	}
	return false, nil
}

// server returns the http.Server with the timeouts and header limit. The
// write timeout leaves the decisions stream its full --request-timeout
// plus a margin to end its answer; the websocket is hijacked, and gorilla
// clears these deadlines on Upgrade.
func (h *hardening) server(handler http.Handler) *http.Server {
	s := &http.Server{Handler: handler, ReadHeaderTimeout: min(10*time.Second, h.readTimeout), ReadTimeout: h.readTimeout,
		IdleTimeout: h.idleTimeout, MaxHeaderBytes: h.maxHeaderBytes}
	if h.requestTimeout > 0 {
		s.WriteTimeout = h.requestTimeout + 10*time.Second
	}
	return s
}

// uploads are the limits of POST /api/v1/uploads. A body may take
// --request-timeout to arrive, not --read-timeout.
func (h *hardening) uploads() uploadOptions {
	return uploadOptions{maxUploads: h.maxUploads, maxSources: h.maxSources, maxMemory: h.maxUploadMemory, UploadLimits: api.UploadLimits{MaxBytes: h.maxUploadBytes,
		MaxBatches: h.maxSourceBatches, BodyTimeout: h.requestTimeout, MaxBytesText: web.FormatBytes(h.maxUploadBytes),
		MaxBytesFlag: "serve --max-upload-bytes", MaxBatchesFlag: "--max-source-batches",
		MinRate: h.minUploadRate, MinRateGrace: h.minUploadGrace, MinRateFlag: "serve --min-upload-rate"}}
}

// configure sets the websocket limits on a.
func (h *hardening) configure(a *api.API) {
	a.Limits = api.WSLimits{MaxMessageSize: h.wsMaxMessage, MessageRate: h.wsRate, MessageBurst: h.wsBurst}
}

// checkLoadSize refuses a --load PATH whose files add up to more than
// --max-source-bytes (a partition directory is opened lazily instead:
// loadPartitionDir), before a byte of them is read: loading keeps about
// 200 B per batch, and a batch can be as small as 61 bytes, so memory
// follows file size. Walking stops as soon as the limit is passed.
func (h *hardening) checkLoadSize(path string) error {
	var total int64
	errOver := errors.New("over")
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			total += info.Size()
		}
		if total > h.maxSourceBytes {
			return errOver
		}
		return nil
	})
	if errors.Is(err, errOver) {
		return fmt.Errorf("--load %s: more than %s of files, over --max-source-bytes (%s); raise the limit, or load a partition directory, which is drawn segment by segment when over it", path, txnindex.Bytes(h.maxSourceBytes), txnindex.Bytes(h.maxSourceBytes))
	}
	return err
}

// checkLoaded refuses a loaded partition with more than --max-source-batches.
func (h *hardening) checkLoaded(path string, ld *input.Contents) error {
	for _, p := range ld.Partitions {
		if n := len(p.Log.Batches); n > h.maxSourceBatches {
			return fmt.Errorf("--load %s: partition %s-%d holds %d batches, over --max-source-batches %d", path, p.Log.Topic, p.Log.Partition, n, h.maxSourceBatches)
		}
	}
	return nil
}

// checkSources refuses a catalog of more than --max-sources partitions.
func (h *hardening) checkSources(cat *catalog, path string) error {
	if n := len(cat.list()); n > h.maxSources {
		return fmt.Errorf("--load %s brings the partitions served to %d, over --max-sources %d", path, n, h.maxSources)
	}
	return nil
}
