package e2e

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/present"
)

// TestUIOddNamesCopyServerCommands opens, in headless Chromium, a stuck
// partition whose directory names the topic a`id`b and a legal one. The
// first page says Kafka would reject the name, and its command boxes show
// and copy the comment the server wrote in place of a command; the second,
// once a bootstrap a`id`b is typed into the field, shows and copies the
// commands with the address quoted as present.ShellWord quotes it.
func TestUIOddNamesCopyServerCommands(t *testing.T) {
	chromium := testtool.Need(t, "chromium")
	dir := t.TempDir()
	for _, topic := range []string{"a`id`b", "orders"} {
		if err := os.Rename(testfixture.WriteHostileDir(t, topic, time.Now()), filepath.Join(dir, topic+"-0")); err != nil {
			t.Fatal(err)
		}
	}
	s := startServe(t, loads(dir))
	resp, err := http.Get("http://" + s.addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	index, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	link := func(topic string) string {
		for _, m := range regexp.MustCompile(`href="(/sources/[^"]*/partitions/([^"/]*)/0)"`).FindAllStringSubmatch(string(index), -1) {
			if u := html.UnescapeString(m[2]); u == strings.ReplaceAll(topic, "`", "%60") {
				return "http://" + s.addr + html.UnescapeString(m[1])
			}
		}
		t.Fatalf("no link to %q in the index", topic)
		return ""
	}
	ctx := startChromium(t, chromium)
	shown := func() (code, copied string) {
		return eval[string](t, ctx, `document.querySelector('[data-testid="abort-command"]').textContent`),
			eval[string](t, ctx, `document.querySelector('[data-testid="copy-abort-command"]').dataset.copy`)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(link("a`id`b")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="abort-command"]`))); err != nil {
		t.Fatal(err)
	}
	refused := present.NewTopicCommands("", "a`id`b", 0).Refused()
	if code, copied := shown(); code != refused || copied != refused {
		t.Errorf("abort box shows %q, copies %q; want %q", code, copied, refused)
	}
	if note := eval[string](t, ctx, `document.querySelector('[data-testid="topic-name-problem"]').textContent`); !strings.Contains(note, "Topic name Kafka would reject: a`id`b") {
		t.Errorf("note %q", note)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="copy-abort-command"]`)),
		chromedp.Poll[chromedp.Void](`window.txnscopeDiagnosis.copies().length === 1`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatal(err)
	}
	if c := eval[[]map[string]string](t, ctx, `window.txnscopeDiagnosis.copies()`); c[0]["text"] != refused {
		t.Errorf("copied %q; want %q", c[0]["text"], refused)
	}

	const boot = "a`id`b:9092"
	if err := chromedp.Do(ctx, chromedp.Navigate(link("orders")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="bootstrap"]`)),
		js(fmt.Sprintf(`(() => { const f = document.querySelector('[data-testid="bootstrap"]'); f.value = %q; f.dispatchEvent(new Event("input", {bubbles: true})); })()`, boot)),
		chromedp.Poll[chromedp.Void](`window.txnscopeDiagnosis.commandUpdates() === 1`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatal(err)
	}
	want := present.NewTopicCommands(boot, "orders", 0).AbortStart(0)
	if !strings.Contains(want, "--bootstrap-server 'a`id`b:9092' abort --topic orders") {
		t.Fatalf("the server's command %q", want)
	}
	if code, copied := shown(); code != want || copied != want {
		t.Errorf("abort box shows %q, copies %q; want %q", code, copied, want)
	}
}
