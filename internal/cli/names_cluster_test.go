package cli

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/pathname"
	"github.com/txnscope/txnscope/internal/testfixture"
)

// TestClusterHostileTopicNames: a broker whose Metadata names topics Kafka
// would reject (kfake creates any name it is given), each with an open
// transaction behind records: `diagnose --bootstrap` text carries no raw
// control character, keeps one verdict line per stuck partition, says
// each name is one Kafka would reject and prints no runnable command; the
// JSON names each topic exactly.
func TestClusterHostileTopicNames(t *testing.T) {
	topics := []string{"orders;touch X;#", "a`id`b", "x\n\x1b[8mclear", "\x1b]0;title\x07"}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addrs := c.ListenAddrs()
	plain := testfixture.KfakeClient(t, addrs)
	var open []testfixture.OpenTxn
	for i, topic := range topics {
		open = append(open, testfixture.OpenTxn{Topic: topic, TxnID: "tx-" + string(rune('a'+i))})
	}
	testfixture.LeaveOpen(t, addrs, plain, open, func(int) int { return 2 })
	if err := plain.ProduceSync(context.Background(), &kgo.Record{Topic: topics[0], Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	bootstrap := strings.Join(addrs, ",")
	later := time.Now().Add(time.Hour).Format(time.RFC3339)

	code, text, errOut := runArgs(t, "diagnose", "--bootstrap", bootstrap, "--now", later)
	if code != 0 && code != exitHanging {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if i := rawControl(text + errOut); i >= 0 {
		t.Errorf("raw control at byte %d: %q", i, (text + errOut)[max(i-30, 0):min(i+30, len(text+errOut))])
	}
	verdicts, rejected := 0, 0
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "STUCK ") || strings.HasPrefix(l, "HANGING ") {
			verdicts++
		}
		if strings.HasPrefix(l, "  topic name Kafka would reject: ") {
			rejected++
		}
		if strings.Contains(l, "kafka-transactions.sh --") || strings.HasPrefix(strings.TrimSpace(l), "clear ") {
			t.Errorf("line %q", l)
		}
	}
	if verdicts != len(topics) || rejected != len(topics) {
		t.Errorf("%d verdict lines, %d rejections; want %d of each:\n%s", verdicts, rejected, len(topics), text)
	}

	_, js, _ := runArgs(t, "diagnose", "--bootstrap", bootstrap, "--now", later, "--format", "json")
	var v struct {
		Partitions []struct {
			Topic string `json:"topic"`
			Open  []struct {
				AbortCommand string `json:"abort_command"`
			} `json:"open_transactions"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	seen := map[string]bool{}
	for _, p := range v.Partitions {
		seen[p.Topic] = true
		for _, o := range p.Open {
			if !strings.HasPrefix(o.AbortCommand, "# no command: topic name Kafka would reject") {
				t.Errorf("%q: abort command %q", p.Topic, o.AbortCommand)
			}
		}
	}
	for _, topic := range topics {
		if !seen[topic] {
			t.Errorf("JSON lacks topic %q", topic)
		}
	}
}

// TestWatchHostileTopicName: `watch --once` of a topic named to hide and
// forge lines (a broker that has it: kfake creates any name) prints no
// raw control character and, for the open transaction, the comment that
// Kafka would reject the name instead of an abort command.
func TestWatchHostileTopicName(t *testing.T) {
	topic := "w;touch X\n\x1b[8m"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addrs := c.ListenAddrs()
	testfixture.LeaveOpen(t, addrs, testfixture.KfakeClient(t, addrs), []testfixture.OpenTxn{{Topic: topic, TxnID: "w-open"}}, func(int) int { return 2 })
	code, out, errOut := runArgs(t, "watch", "--bootstrap", addrs[0], "--topic", topic, "--once")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if i := rawControl(out + errOut); i >= 0 {
		t.Errorf("raw control at byte %d: %q", i, (out + errOut)[max(i-30, 0):min(i+30, len(out+errOut))])
	}
	if !strings.Contains(out, `"w;touch X\n\x1b[8m"-0`) || !strings.Contains(out, "# no command: topic name Kafka would reject") || strings.Contains(out, "kafka-transactions.sh --") {
		t.Errorf("want the partition named quoted and no abort command:\n%s", out)
	}
}

// TestClusterServeHostileTopicLinks: serve --bootstrap of a broker whose
// Metadata names topics a`id`b, a;b and "..": the cluster page links
// each, and each link opens that partition's live timeline.
func TestClusterServeHostileTopicLinks(t *testing.T) {
	topics := []string{"a`id`b", "a;b", ".."}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addrs := c.ListenAddrs()
	plain := testfixture.KfakeClient(t, addrs)
	for _, topic := range topics {
		if err := plain.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	addr := startServe(t, "--bootstrap", addrs[0], "--poll", "300ms").addr
	base, _ := url.Parse("http://" + addr + "/")
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
	var links [][]string
	for deadline := time.Now().Add(20 * time.Second); len(links) < len(topics) && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_, index := get(base)
		links = regexp.MustCompile(`href="(/cluster/[^"]*)"`).FindAllStringSubmatch(index, -1)
	}
	opened := map[string]bool{}
	for _, m := range links {
		ref, _ := url.Parse(html.UnescapeString(m[1]))
		segs := strings.Split(ref.EscapedPath(), "/")
		topic, err := pathname.Name(segs[2])
		if err != nil {
			t.Errorf("link %s: %v", m[1], err)
			continue
		}
		code, page := get(base.ResolveReference(ref)) // redirected to the timeline
		api := regexp.MustCompile(`data-api="([^"]*)"`).FindStringSubmatch(page)
		if code != 200 || api == nil || !strings.Contains(page, html.EscapeString(topic+"-0")) {
			t.Errorf("link %s: %d, page does not name %q:\n%.300s", m[1], code, topic, page)
			continue
		}
		opened[topic] = true
	}
	for _, topic := range topics {
		if !opened[topic] {
			t.Errorf("no link of the cluster page opens %q-0 (%d links)", topic, len(links))
		}
	}
}
