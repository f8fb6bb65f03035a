package live

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/hostilebroker"
)

// TestHalfSentMetadata: a broker that closes the connection halfway
// through its Metadata answer, with and without SASL. The error must
// blame the cut answer; with SASL the credentials were accepted (the
// handshake and authentication answered without error), and blaming them
// sends the user after the wrong fault.
func TestHalfSentMetadata(t *testing.T) {
	tests := []struct {
		name string
		sasl *SASL
	}{
		{"plaintext", nil},
		{"sasl_plain", &SASL{Mechanism: "PLAIN", User: "alice", Password: "secret"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := hostilebroker.New(t, "meta", 1)
			b.Handler = func(req kmsg.Request) *hostilebroker.Reply {
				switch req.(type) {
				case *kmsg.SASLHandshakeRequest:
					resp := kmsg.NewPtrSASLHandshakeResponse()
					resp.SupportedMechanisms = []string{"PLAIN"}
					return &hostilebroker.Reply{Resp: resp}
				case *kmsg.MetadataRequest:
					return &hostilebroker.Reply{Resp: b.Default(req), Cut: 40}
				}
				return nil
			}
			_, err := Dial(context.Background(), Config{Brokers: []string{b.Addr()}, Topic: "meta", SASL: tc.sasl, DialTimeout: 2 * time.Second})
			if err == nil {
				t.Fatal("Dial succeeded")
			}
			t.Logf("%v", err)
			if errors.Is(err, ErrAuth) || strings.Contains(err.Error(), "SASL") || strings.Contains(err.Error(), "password") {
				t.Errorf("error %q blames the credentials", err)
			}
			if !strings.Contains(err.Error(), "Metadata") || !strings.Contains(err.Error(), "closed the connection") {
				t.Errorf("error %q does not say the Metadata answer was cut", err)
			}
			if tc.sasl != nil && b.Requests(kmsg.SASLAuthenticate) == 0 {
				t.Errorf("the client did not authenticate")
			}
			if b.Requests(kmsg.Metadata) == 0 {
				t.Errorf("no Metadata request reached the broker")
			}
		})
	}
}
