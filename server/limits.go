package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/guard"
	"github.com/txnscope/txnscope/web"
)

// check validates the limits and the listen address, reads the token, and
// prints the warning a public listener deserves.
func (o *Options) check(stderr io.Writer) (*security, error) {
	addr := o.Addr
	for _, c := range []struct {
		name string
		v    int64
	}{{"max-sources", int64(o.MaxSources)}, {"max-source-bytes", o.MaxSourceBytes}, {"max-source-batches", int64(o.MaxSourceBatches)},
		{"max-open-files", int64(o.MaxOpenFiles)}, {"ws-max-message", int64(o.WSMaxMessage)}, {"ws-burst", int64(o.WSBurst)}, {"max-header-bytes", int64(o.MaxHeaderBytes)}} {
		if c.v <= 0 {
			return nil, usagef("--%s must be positive, not %d", c.name, c.v)
		}
	}
	if o.MaxUploadBytes < 0 {
		return nil, usagef("--max-upload-bytes must be 0 (no uploads) or positive, not %d", o.MaxUploadBytes)
	}
	if o.MinUploadRate < 0 || o.MinUploadGrace < 0 || o.MaxUploadMemory < 0 {
		return nil, usagef("--min-upload-rate, --min-upload-grace and --max-upload-memory must not be negative")
	}
	if o.MaxUploads <= 0 {
		return nil, usagef("--max-uploads must be positive, not %d", o.MaxUploads)
	}
	if o.WSRate <= 0 {
		return nil, usagef("--ws-rate must be positive, not %g", o.WSRate)
	}
	sec := &security{requestTimeout: o.RequestTimeout, checkHost: !o.ListenPublic}
	sec.addrHost, _, _ = net.SplitHostPort(addr)
	if o.AuthTokenFile != "" {
		b, err := os.ReadFile(o.AuthTokenFile)
		if err != nil {
			return nil, fmt.Errorf("--auth-token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if len(tok) < 16 || strings.ContainsAny(tok, " \t\r\n") {
			// The file's content is never echoed: it is meant to be secret.
			return nil, fmt.Errorf("--auth-token-file %s: want one line of at least 16 characters without spaces", o.AuthTokenFile)
		}
		if st, err := os.Stat(o.AuthTokenFile); err == nil && st.Mode().Perm()&0o077 != 0 {
			fmt.Fprintf(stderr, "warning: --auth-token-file %s is readable by other users (mode %v); chmod 600 it\n", o.AuthTokenFile, st.Mode().Perm())
		}
		sec.token = guard.NewToken(tok)
	}
	public, err := isPublic(addr)
	if err != nil {
		return nil, err
	}
	switch {
	case public && !o.ListenPublic:
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
func (o *Options) server(handler http.Handler) *http.Server {
	s := &http.Server{Handler: handler, ReadHeaderTimeout: min(10*time.Second, o.ReadTimeout), ReadTimeout: o.ReadTimeout,
		IdleTimeout: o.IdleTimeout, MaxHeaderBytes: o.MaxHeaderBytes}
	if o.RequestTimeout > 0 {
		s.WriteTimeout = o.RequestTimeout + 10*time.Second
	}
	return s
}

// uploads are the limits of POST /api/v1/uploads. A body may take
// --request-timeout to arrive, not --read-timeout.
func (o *Options) uploads() uploadOptions {
	return uploadOptions{maxUploads: o.MaxUploads, maxSources: o.MaxSources, maxMemory: o.MaxUploadMemory, UploadLimits: api.UploadLimits{MaxBytes: o.MaxUploadBytes,
		MaxBatches: o.MaxSourceBatches, BodyTimeout: o.RequestTimeout, MaxBytesText: web.FormatBytes(o.MaxUploadBytes),
		MaxBytesFlag: "serve --max-upload-bytes", MaxBatchesFlag: "--max-source-batches",
		MinRate: o.MinUploadRate, MinRateGrace: o.MinUploadGrace, MinRateFlag: "serve --min-upload-rate"}}
}

// configure sets the websocket limits on a.
func (o *Options) configure(a *api.API) {
	a.Limits = api.WSLimits{MaxMessageSize: o.WSMaxMessage, MessageRate: o.WSRate, MessageBurst: o.WSBurst}
}

// checkSources refuses a catalog of more than --max-sources partitions.
func (o *Options) checkSources(cat *catalog, path string) error {
	if n := len(cat.list()); n > o.MaxSources {
		return fmt.Errorf("--load %s brings the partitions served to %d, over --max-sources %d", path, n, o.MaxSources)
	}
	return nil
}
