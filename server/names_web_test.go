package server

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/txnscope/txnscope/internal/pathname"
	"github.com/txnscope/txnscope/internal/testfixture"
)

// oddDirTopics are topic names a partition directory can carry, each a
// different way for a link to miss its page: escapes chi hands over
// escaped (';'), the marker pathname writes for dot segments ('~'), and
// what must be escaped at all. The topics "." and "..", whose links a
// browser would resolve away, are not served at all: the loader refuses
// them as Kafka refuses those names (loader.ErrDotTopic), and pathname's
// own tests hold their round trip.
var oddDirTopics = []string{
	"orders", "a;b", "~x", "a b", "a%b", "a?b", "a#b", "orders[0]", "a`id`b", "zamówienia", "a\nb", "a+b", "a&b", "%2e%2e", "~.",
}

// TestOddTopicLinksOpenTheirPages serves a log dir whose partition
// directories carry oddDirTopics with the real routes, follows each link
// of the index page as a browser resolves it (RFC 3986 dot segments
// removed), and checks it opens that partition's page, whose API path
// answers and whose stream opens for the same partition; and that the
// lessons page's links to each lesson and embed open.
func TestOddTopicLinksOpenTheirPages(t *testing.T) {
	now := time.Now()
	dir := t.TempDir()
	for _, topic := range oddDirTopics {
		p := testfixture.WriteHostileDir(t, topic, now)
		if err := os.Rename(p, filepath.Join(dir, topic+"-0")); err != nil {
			t.Fatal(err)
		}
	}
	s := startServe(t, loads(dir))
	base, _ := url.Parse("http://" + s.addr + "/")
	get := func(u *url.URL) (int, string) {
		t.Helper()
		resp, err := http.Get(u.String())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, index := get(base)
	hrefs := regexp.MustCompile(`href="(/sources/[^"]*/partitions/[^"]*)"`).FindAllStringSubmatch(index, -1)
	opened := map[string]bool{}
	for _, m := range hrefs {
		ref, err := url.Parse(html.UnescapeString(m[1]))
		if err != nil {
			t.Errorf("link %q: %v", m[1], err)
			continue
		}
		u := base.ResolveReference(ref)
		code, page := get(u)
		name := regexp.MustCompile(`data-api="([^"]*)"`).FindStringSubmatch(page)
		if code != 200 || name == nil {
			t.Errorf("link %s (%s): %d\n%.300s", m[1], u, code, page)
			continue
		}
		api, _ := url.Parse(html.UnescapeString(name[1]) + "/diagnosis")
		code, js := get(base.ResolveReference(api))
		var topic string
		for _, tp := range oddDirTopics {
			if strings.Contains(js, `"topic": `+jsonString(tp)+`,`) {
				topic = tp
			}
		}
		if code == 200 && strings.Contains(js, `"topic": "demo-`) {
			continue // the demos' links
		}
		if code != 200 || topic == "" {
			t.Errorf("link %s: its page's API %s answers %d\n%.300s", m[1], api, code, js)
			continue
		}
		if !strings.Contains(page, html.EscapeString(topic+"-0")) {
			t.Errorf("link %s opened a page that does not name %q", m[1], topic)
		}
		// The page's stream opens too, and its first message is the
		// partition's.
		ws := regexp.MustCompile(`data-ws="([^"]*)"`).FindStringSubmatch(page)
		if ws == nil {
			t.Errorf("link %s: no stream path", m[1])
			continue
		}
		c, _, err := websocket.DefaultDialer.Dial("ws://"+s.addr+html.UnescapeString(ws[1]), nil)
		if err != nil {
			t.Errorf("link %s: stream %s: %v", m[1], ws[1], err)
			continue
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, first, err := c.ReadMessage()
		c.Close()
		if err != nil || !strings.Contains(string(first), `"type":"meta"`) || !strings.Contains(string(first), jsonString(topic)) {
			t.Errorf("link %s: stream's first message %.200s (%v)", m[1], first, err)
		}
		opened[topic] = true
	}
	// The lessons page links each partition's lesson and embed.
	_, lessons := get(base.ResolveReference(&url.URL{Path: "/lessons"}))
	lessonOpened := map[string]int{}
	for _, m := range regexp.MustCompile(`href="(/(?:lessons|embed)/[^"]*)"`).FindAllStringSubmatch(lessons, -1) {
		ref, err := url.Parse(html.UnescapeString(m[1]))
		if err != nil {
			t.Errorf("link %q: %v", m[1], err)
			continue
		}
		segs := strings.Split(ref.EscapedPath(), "/")
		topic, err := pathname.Name(segs[len(segs)-2])
		if err != nil || strings.HasPrefix(topic, "demo-") {
			continue
		}
		code, page := get(base.ResolveReference(ref))
		if code != 200 || !strings.Contains(page, jsonString(topic)[1:len(jsonString(topic))-1]) && !strings.Contains(page, html.EscapeString(topic)) {
			t.Errorf("link %s: %d, page does not name %q", m[1], code, topic)
			continue
		}
		lessonOpened[topic]++
	}
	for _, tp := range oddDirTopics {
		if !opened[tp] {
			t.Errorf("no link of the index opens %q-0 (%d links)", tp, len(hrefs))
		}
		if lessonOpened[tp] < 2 {
			t.Errorf("%d links of /lessons open %q-0's lesson and embed", lessonOpened[tp], tp)
		}
	}
}

// jsonString is s as jsonid writes it in a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
