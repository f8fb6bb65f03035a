package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/txnscope/txnscope/server"
	"github.com/txnscope/txnscope/txnindex"
)

// runServe is `txnscope serve`: its flags become server.Options, and the
// server (package server) loads, listens and shuts down gracefully when
// ctx ends (SIGINT, SIGTERM: Main).
func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "[flags]", "Serve txnscope on the embedded demo scenarios and every --load PATH.")
	o := server.DefaultOptions()
	fs.StringVar(&o.Addr, "addr", o.Addr, "listen address; loopback by default")
	var loads, origins multiFlag
	fs.Var(&loads, "load", "add a log directory, partition directory, segment, capture or dump text (repeatable)")
	fs.BoolVar(&o.Big, "big", o.Big, "also offer the generated 1M-batch demo (built on first request)")
	fs.Var(&origins, "allowed-origin", "an origin (https://host[:port]) whose pages may embed the timeline in an iframe (repeatable; default: this server only)")
	addLimitFlags(fs, &o)
	fs.Var((*byteSize)(&o.MaxMemory), "max-memory", "memory for what the server keeps of partitions: the partitions of a --load directory opened whole, the segment windows (…/segments, …/window) and the stream's kept encodings hold at most half together, least recently used first out (opened again when asked for), the rest is the garbage collector's headroom; a partition whose whole load would take more than a quarter is shown one segment at a time; default a quarter of this machine's memory"+sizeNote)
	fs.StringVar(&o.SummaryCacheDir, "summary-cache-dir", o.SummaryCacheDir, "directory for the per-segment summaries of the segment routes, so a restart need not rescan (never the log dir); empty: memory only")
	lf := addLiveFlags(fs, "also serve a live cluster, read-only (HOST:PORT[,HOST:PORT]): with --topic its partitions' timelines, without it every partition by LSO lag (docs/cluster-mode.md)")
	if err := refusePasswordFlag(args); err != nil {
		return err
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	o.Loads, o.AllowedOrigins = loads, origins
	if err := lf.serveOptions(fs, &o); err != nil { // liveflags.go
		return err
	}
	o.Stdout, o.Stderr, o.Listening = e.stdout, e.stderr, e.ready
	s, err := server.New(ctx, o)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}

// addLimitFlags defines serve's limit and security flags on o's fields,
// their defaults o's (server.DefaultOptions).
func addLimitFlags(fs *flag.FlagSet, o *server.Options) {
	fs.Var((*countValue)(&o.MaxSources), "max-sources", "most partitions served at once (demos, uploads and every partition --load lists; a listed partition costs about 1 KB until opened)"+countNote)
	fs.Var((*byteSize)(&o.MaxSourceBytes), "max-source-bytes", "most bytes of files one partition may hold to be opened in full (a --load PATH that is not a log directory: the whole PATH); checked before reading"+sizeNote)
	fs.Var((*countValue)(&o.MaxSourceBatches), "max-source-batches", fmt.Sprintf("most batches one partition opened in full may hold (%d B of memory each)", txnindex.LogBytesPerBatch)+countNote)
	fs.Var((*countValue)(&o.MaxOpenFiles), "max-open-files", "most segment files open at once to decode records"+countNote)
	fs.Var((*intByteSize)(&o.WSMaxMessage), "ws-max-message", "largest websocket message a client may send, in bytes (larger: closed with 1008)"+sizeNote)
	fs.Float64Var(&o.WSRate, "ws-rate", o.WSRate, "websocket messages per second a client may send on average (faster: closed with 1008)")
	fs.Var((*countValue)(&o.WSBurst), "ws-burst", "websocket messages a client may send in a burst above --ws-rate"+countNote)
	fs.Var((*durationValue)(&o.RequestTimeout), "request-timeout", "longest an HTTP request may take (not the websocket stream); 0: none"+durationNote)
	fs.Var((*durationValue)(&o.ReadTimeout), "read-timeout", "longest a client may take to send a request, headers and body"+durationNote)
	fs.Var((*durationValue)(&o.IdleTimeout), "idle-timeout", "how long an idle keep-alive connection is kept"+durationNote)
	fs.Var((*intByteSize)(&o.MaxHeaderBytes), "max-header-bytes", "largest request header block, in bytes (larger: 431)"+sizeNote)
	fs.Var((*durationValue)(&o.ShutdownGrace), "shutdown-grace", "how long in-flight requests and websocket close frames get on SIGINT/SIGTERM"+durationNote)
	fs.BoolVar(&o.ListenPublic, "listen-public", o.ListenPublic, "allow --addr to be a non-loopback address (prints a warning; see --auth-token-file)")
	fs.StringVar(&o.AuthTokenFile, "auth-token-file", o.AuthTokenFile, "file holding a bearer token every HTTP request and websocket must carry")
	fs.Var((*byteSize)(&o.MaxUploadMemory), "max-upload-memory", fmt.Sprintf("most memory the kept uploads may hold together (their kept bytes and decoded batches, %d B each), the oldest evicted past it; an upload alone over it is refused with 413 (0: no bound)", txnindex.LogBytesPerBatch)+sizeNote)
	fs.Var((*byteSize)(&o.MinUploadRate), "min-upload-rate", "slowest an upload's body may arrive, in bytes per second on average after --min-upload-grace; slower uploads are dropped with 408 (0: no minimum)"+sizeNote)
	fs.Var((*durationValue)(&o.MinUploadGrace), "min-upload-grace", "how long an upload may arrive at any rate before --min-upload-rate applies"+durationNote)
	fs.Var((*byteSize)(&o.MaxUploadBytes), "max-upload-bytes", "largest file the index page (POST /api/v1/uploads) accepts, kept in memory only; 0 disables uploads"+sizeNote)
	fs.Var((*countValue)(&o.MaxUploads), "max-uploads", "most uploaded files served at once; the oldest upload is evicted to make room (never the demos or --load)"+countNote)
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return fmt.Sprint([]string(*m)) }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
