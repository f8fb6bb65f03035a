package capture

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestPcapSnapLenZero: a pcap file header whose snap length is 0 had every
// packet refused ("capture length exceeds snap length: 60 > 0"), where
// libpcap (sf-pcap.c) takes 0 for the link type's largest snap length and
// tcpdump and Wireshark read the file. It is read as libpcap reads it.
func TestPcapSnapLenZero(t *testing.T) {
	for _, tc := range []struct {
		name    string
		snaplen uint32
	}{
		{"snap length 65535", 65535},
		{"snap length 0 is libpcap's largest", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cv := newConv(t)
			req, resp := fetchExchange(13, 0, batch(0, 10, 40))
			cv.send(true, requestFrame(req, 1), 65000)
			cv.send(false, responseFrame(resp, 1), 65000)
			cv.close()
			b := cv.pcap()
			binary.LittleEndian.PutUint32(b[16:], tc.snaplen)
			c, err := Read(bytes.NewReader(b), "snap.pcap")
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Fetches) != 1 || len(c.Problems) != 0 || c.Packets != len(cv.pkts) {
				t.Errorf("%d packets, %d fetches, problems %v: want %d packets, 1 fetch, none", c.Packets, len(c.Fetches), c.Problems, len(cv.pkts))
			}
		})
	}
}
