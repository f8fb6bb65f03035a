package cli

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
)

func runWatchArgs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := runWatch(context.Background(), &env{stdout: &out, stderr: &errb}, args)
	return out.String(), err
}

// TestWatchOnceText: one update, with the open transaction, its
// transactional id, the abort command for the real bootstrap address and
// the group it holds up (w-app, committed at the LSO as a simple consumer;
// w-reader, past it, is not held).
func TestWatchOnceText(t *testing.T) {
	t.Parallel()
	addr, first := testfixture.WatchCluster(t)
	admin, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	testfixture.CommitOffset(t, admin, "w-app", "w", 0, first)
	testfixture.CommitOffset(t, admin, "w-reader", "w", 0, first+1)
	out, err := runWatchArgs(t, "--bootstrap", addr, "--topic", "w", "--once")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("\n%s", out)
	if strings.Contains(out, "w-reader") {
		t.Errorf("a group past the LSO is listed:\n%s", out)
	}
	for _, want := range []string{"w-0", `"open-one"`, "pins the LSO", "LSO " + itoa(first),
		"kafka-transactions.sh --bootstrap-server " + addr + " abort --topic w --partition 0 --start-offset " + itoa(first),
		`group "w-app" committed ` + itoa(first) + ": BLOCKED: waiting at the LSO"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "MISMATCH") {
		t.Errorf("mismatch:\n%s", out)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestWatchJSONAndRecord: --format json prints one object; --record
// writes a raw capture that loads (as --load would) and replays to the
// read_committed decisions the live view reported.
func TestWatchJSONAndRecord(t *testing.T) {
	t.Parallel()
	addr, first := testfixture.WatchCluster(t)
	file := filepath.Join(t.TempDir(), "live.raw")
	out, err := runWatchArgs(t, "--bootstrap", addr, "--topic", "w", "--partition", "0", "--once", "--format", "json", "--record", file)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var u struct {
		Mismatches []string `json:"mismatches"`
		Partitions []struct {
			EngineLSO         int64 `json:"engine_lso"`
			ListedLSO         int64 `json:"listed_lso"`
			CommittedPosition int64 `json:"committed_position"`
			Open              []struct {
				TransactionalID string `json:"transactional_id"`
			} `json:"open_transactions"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(out), &u); err != nil || len(u.Partitions) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	p := u.Partitions[0]
	if len(u.Mismatches) > 0 || p.EngineLSO != first || p.ListedLSO != first || len(p.Open) != 1 || p.Open[0].TransactionalID != "open-one" {
		t.Fatalf("update %s", out)
	}

	ld, err := input.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	if ld.Kind != "raw capture" || len(ld.Problems) > 0 {
		t.Fatalf("%s: %v", ld.Kind, ld.Problems)
	}
	var committed *input.Partition
	for _, pt := range ld.Partitions {
		if pt.Isolation == txnindex.ReadCommitted {
			committed = pt
		}
	}
	if committed == nil || committed.Log.Topic != "w" {
		t.Fatalf("no read_committed consumer in the capture: %+v", ld.Partitions)
	}
	var got []int64
	for d := range committed.Decisions(txnindex.ConsumeOptions{Isolation: txnindex.ReadCommitted}) {
		if d.Verdict == txnindex.Delivered {
			for o := d.From; o <= d.To; o++ {
				got = append(got, o)
			}
		}
	}
	// The committed transaction's two records, nothing aborted or open.
	if !slices.Equal(got, []int64{0, 1}) || p.CommittedPosition != first {
		t.Fatalf("replayed %v, committed position %d", got, p.CommittedPosition)
	}
}

// TestWatchSASLPassword: the password comes from a file or the
// environment, never a flag, and is never printed.
func TestWatchSASLPassword(t *testing.T) {
	addr, _ := testfixture.WatchCluster(t, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "bob", "hunter2-long"))
	pf := filepath.Join(t.TempDir(), "pass")
	if err := os.WriteFile(pf, []byte("hunter2-long\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"--bootstrap", addr, "--topic", "w", "--once", "--sasl-mechanism", "scram-sha-512", "--sasl-user", "bob"}
	if out, err := runWatchArgs(t, append(base, "--sasl-password-file", pf)...); err != nil || strings.Contains(out, "hunter2") {
		t.Fatalf("password file: %v\n%s", err, out)
	}
	t.Setenv(passwordEnv, "hunter2-long")
	if out, err := runWatchArgs(t, base...); err != nil {
		t.Fatalf("environment: %v\n%s", err, out)
	}
	t.Setenv(passwordEnv, "wrong-password")
	start := time.Now()
	_, err := runWatchArgs(t, base...)
	if err == nil || !strings.Contains(err.Error(), "authentication failed") || strings.Contains(err.Error(), "wrong-password") || time.Since(start) > 5*time.Second {
		t.Fatalf("wrong password: %v after %s", err, time.Since(start))
	}
	_, err = runWatchArgs(t, append(base, "--sasl-password=hunter2-long")...)
	var ue *usageError
	if !errors.As(err, &ue) || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("password flag: %v", err)
	}
}

// TestWatchErrors: bad usage exits 2; an unreachable cluster and a
// missing topic fail at once with a clear error.
func TestWatchErrors(t *testing.T) {
	t.Parallel()
	var ue *usageError
	for _, args := range [][]string{
		{"--topic", "t"},
		{"--bootstrap", "h:1"},
		{"--bootstrap", "h:1", "--topic", "t", "--from", "3", "--last", "2"},
		{"--bootstrap", "h:1", "--topic", "t", "--format", "xml"},
		{"--bootstrap", "h:1", "--topic", "t", "--sasl-mechanism", "gssapi", "--sasl-user", "u"},
		{"--bootstrap", "h:1", "--topic", "t", "--tls-cert", "c.pem"},
		{"--bootstrap", "h:1", "--topic", "t", "--partition", "x"},
	} {
		if _, err := runWatchArgs(t, args...); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	start := time.Now()
	if _, err := runWatchArgs(t, "--bootstrap", dead, "--topic", "t", "--once", "--dial-timeout", "1s"); err == nil || !strings.Contains(err.Error(), "unreachable") || time.Since(start) > 5*time.Second {
		t.Errorf("unreachable: %v after %s", err, time.Since(start))
	}
	addr, _ := testfixture.WatchCluster(t)
	if _, err := runWatchArgs(t, "--bootstrap", addr, "--topic", "nope", "--once"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing topic: %v", err)
	}
}

// TestWatchTLS: mutual TLS with a CA file and a client certificate, the
// broker requiring and verifying the client's certificate.
func TestWatchTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "txnscope test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(name string, serial int64, usage x509.ExtKeyUsage) tls.Certificate {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, _ := x509.MarshalECPrivateKey(k)
		if err := os.WriteFile(filepath.Join(dir, name+".pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	server := issue("server", 2, x509.ExtKeyUsageServerAuth)
	issue("client", 3, x509.ExtKeyUsageClientAuth)
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	addr, _ := testfixture.WatchCluster(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{server}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}))

	base := []string{"--bootstrap", addr, "--topic", "w", "--once", "--dial-timeout", "2s", "--tls-ca", filepath.Join(dir, "ca.pem")}
	out, err := runWatchArgs(t, append(base, "--tls-cert", filepath.Join(dir, "client.pem"), "--tls-key", filepath.Join(dir, "client.key"))...)
	if err != nil || !strings.Contains(out, "w-0") {
		t.Fatalf("mutual TLS: %v\n%s", err, out)
	}
	start := time.Now()
	if _, err := runWatchArgs(t, base...); err == nil || !strings.Contains(err.Error(), "TLS") || time.Since(start) > 6*time.Second {
		t.Fatalf("without a client certificate: %v after %s", err, time.Since(start))
	} else {
		t.Logf("without a client certificate: %v (%s)", err, time.Since(start).Round(time.Millisecond))
	}
	// A CA that did not sign the server's certificate.
	other := filepath.Join(dir, "other.pem")
	if err := os.WriteFile(other, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caSelfSigned(t)}), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runWatchArgs(t, "--bootstrap", addr, "--topic", "w", "--once", "--dial-timeout", "2s", "--tls-ca", other); err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("unknown CA: %v", err)
	} else {
		t.Logf("unknown CA: %v", err)
	}
}

func caSelfSigned(t *testing.T) []byte {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(9), Subject: pkix.Name{CommonName: "another CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// syncBuffer is a bytes.Buffer safe for the command's writes and the
// test's reads.
type syncBuffer = testfixture.SyncBuffer

// TestWatchTail: without --once the command tails the topic; ending the
// open transaction prints the LSO move within a second, and an interrupt
// ends the command cleanly.
func TestWatchTail(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "tail"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("tail"), kgo.TransactionalID("tailer"), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	bg := context.Background()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(bg, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	var out syncBuffer
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() {
		done <- runWatch(ctx, &env{stdout: &out, stderr: &out}, []string{"--bootstrap", addr, "--topic", "tail", "--poll", "50ms"})
	}()
	waitOut := func(want string) {
		t.Helper()
		// A bound against hangs, not a latency claim: a loaded CI
		// machine may take longer than the one-second target.
		deadline := time.Now().Add(15 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("no %q within 15 s:\n%s", want, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitOut(`"tailer"`)
	if err := cl.EndTransaction(bg, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	waitOut("LSO moved 0 -> 2")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("interrupted: %v", err)
	}
	if strings.Contains(out.String(), "MISMATCH") {
		t.Errorf("mismatch:\n%s", out.String())
	}
	t.Logf("\n%s", out.String())
}
