package server

// The upload limits: a minimum transfer rate and a bound on the
// memory kept uploads hold.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/txnindex"
)

// TestUploadMinRate: Two uploads trickling a byte
// every 200 ms (and one sending no body byte at all) held both upload
// slots for the whole --request-timeout; under --min-upload-rate they are
// dropped with 408 naming the flag soon after the grace period, and an
// ordinary upload then goes through.
func TestUploadMinRate(t *testing.T) {
	b := readFile(t, uploadSegment)
	s := startServe(t, func(o *Options) {
		o.MinUploadRate = 4096
		o.MinUploadGrace = time.Second
		o.RequestTimeout = 60 * time.Second
	})
	type answer struct {
		code int
		body string
		took time.Duration
	}
	trickle := func(perByte time.Duration) answer {
		start := time.Now()
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Error(err)
			return answer{}
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /api/v1/uploads?name=slow.log HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", s.addr, len(b))
		stop := make(chan struct{})
		defer close(stop)
		if perByte > 0 {
			go func() {
				for i := 0; i < len(b); i++ {
					select {
					case <-stop:
						return
					case <-time.After(perByte):
					}
					if _, err := c.Write(b[i : i+1]); err != nil {
						return
					}
				}
			}()
		}
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Error(err)
			return answer{}
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return answer{resp.StatusCode, string(raw), time.Since(start)}
	}
	res := make(chan answer, 3)
	for _, d := range []time.Duration{200 * time.Millisecond, 200 * time.Millisecond, 0} {
		go func() { res <- trickle(d) }()
	}
	for range 3 {
		a := <-res
		if a.code != http.StatusRequestTimeout || !strings.Contains(a.body, "serve --min-upload-rate") || a.took > 10*time.Second {
			t.Errorf("slow upload: %d after %v: %s", a.code, a.took, a.body)
		}
	}
	if code, a := upload(t, "http://"+s.addr, "fast.log", bytes.NewReader(b), nil); code != http.StatusCreated {
		t.Errorf("an ordinary upload after the slow ones: %d %+v", code, a)
	}
}

// TestUploadMemory: Kept uploads are bounded by
// --max-upload-memory (kept bytes and decoded batches): past it the
// oldest are evicted; an upload alone over it is refused with 413 naming
// the flag.
func TestUploadMemory(t *testing.T) {
	b := readFile(t, uploadSegment)
	in, err := input.OpenBytes("x.log", b)
	if err != nil {
		t.Fatal(err)
	}
	mem := load.CostOf(in).Memory()
	if want := int64(len(b)) + txnindex.LogBytes(int64(len(in.Partitions[0].Log.Batches))); mem != want {
		t.Fatalf("Memory %d, want the bytes and txnindex.LogBytes a batch: %d", mem, want)
	}
	s := startServe(t, func(o *Options) { o.MaxUploadMemory = 2*mem + mem/2 })
	var ids []string
	for i := range 3 {
		code, a := upload(t, "http://"+s.addr, fmt.Sprintf("m%d.log", i), bytes.NewReader(b), nil)
		if code != http.StatusCreated {
			t.Fatalf("upload %d: %d %+v", i, code, a)
		}
		ids = append(ids, a.ID)
		if i < 2 && len(a.Evicted) != 0 {
			t.Errorf("upload %d evicted %v within the memory bound", i, a.Evicted)
		}
		if i == 2 && (len(a.Evicted) != 1 || a.Evicted[0].ID != ids[0]) {
			t.Errorf("the third upload evicted %v, want the oldest, %s", a.Evicted, ids[0])
		}
	}
	s.stop(t)

	s = startServe(t, func(o *Options) { o.MaxUploadMemory = mem - 1 })
	code, a := upload(t, "http://"+s.addr, "big.log", bytes.NewReader(b), nil)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(a.Error, "--max-upload-memory") {
		t.Errorf("an upload alone over --max-upload-memory: %d %q", code, a.Error)
	}
	s.stop(t)
}
