package present

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// bashWords runs `printf '%s\0' WORDS` under bash in a fresh directory
// that holds the files plant names (for glob characters to match), and
// returns the arguments bash passed and the directory's files afterwards.
func bashWords(t *testing.T, words []string, plant ...string) (args []string, files []string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	for _, f := range plant {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bash, "-c", `printf '%s\0' `+strings.Join(words, " "))
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		files = append(files, e.Name())
	}
	if len(out) == 0 {
		return nil, files
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"), files
}

// TestShellWordBehaviours: bash reads ShellWord(s) back as the one word
// s, runs nothing (no canary file appears) and expands no glob against
// the files present.
func TestShellWordBehaviours(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		bare    bool // printed as it is
	}{
		{"legal topic", "orders.v2_x-y", true},
		{"host and port", "kafka-1.example.com:9092", true},
		{"broker list", "k1:9092,k2:9092", true},
		{"empty is an empty word", "", false},
		{"semicolon ends a command", "orders;touch canary;#", false},
		{"command substitution", "$(touch canary)", false},
		{"backticks", "a`touch canary`b", false},
		{"single quote", "it's", false},
		{"double quotes and a variable", `"$BOOTSTRAP"`, false},
		{"pipe and redirection", "a|touch canary>x", false},
		{"ampersand", "a&touch canary", false},
		{"newline runs the next line", "a\ntouch canary", false},
		{"carriage return", "a\rb", false},
		{"backslash", `a\b`, false},
		{"glob star matches a file", "x*", false},
		{"glob class matches a file", "x[1]", false},
		{"question mark matches a file", "x?", false},
		{"tilde expands to home", "~", false},
		{"braces expand", "{a,b}", false},
		{"zsh equals expansion", "=ls", false},
		{"hash starts a comment", "#x", false},
		{"space splits words", "a b", false},
		{"escape sequence", "\x1b[8mSTUCK", false},
		{"bytes not UTF-8", "a\xff\xfeb", false},
		{"unicode", "zamówienia-日本", false},
		{"only quotes", "''", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := ShellWord(tc.s)
			if (w == tc.s) != tc.bare {
				t.Errorf("ShellWord(%q) = %s, bare %v; want bare %v", tc.s, w, w == tc.s, tc.bare)
			}
			args, files := bashWords(t, []string{w}, "x1", "x2", "xy")
			if len(args) != 1 || args[0] != tc.s {
				t.Errorf("ShellWord(%q) = %s: bash read %q", tc.s, w, args)
			}
			if len(files) != 3 {
				t.Errorf("ShellWord(%q) = %s: the directory holds %q afterwards", tc.s, w, files)
			}
		})
	}
}

// TestShellWordSweep: every byte 0x01-0xff alone, between letters and
// doubled, and a few runes of every width, in one bash run: bash gives
// back exactly each word and creates no file.
func TestShellWordSweep(t *testing.T) {
	var names []string
	for c := 1; c <= 0xff; c++ {
		b := string([]byte{byte(c)})
		names = append(names, b, "a"+b+"b", b+b, "x"+b+"touch canary")
	}
	names = append(names, "é", "€", "😀", "\u202e", "\u0085", "\u2028", strings.Repeat("'", 5), "'$(touch canary)'")
	words := make([]string, len(names))
	for i, s := range names {
		words[i] = ShellWord(s)
	}
	args, files := bashWords(t, words, "x1", "a")
	if len(args) != len(names) {
		t.Fatalf("bash passed %d arguments for %d words", len(args), len(names))
	}
	for i := range names {
		if args[i] != names[i] {
			t.Errorf("ShellWord(%q) = %s: bash read %q", names[i], words[i], args[i])
		}
	}
	if len(files) != 2 {
		t.Errorf("the directory holds %q afterwards", files)
	}
}

// TestTopicCommandsInBash runs every command of TopicCommands under bash
// with the tools replaced by functions that print their arguments: a
// legal topic's commands pass the topic as one argument after --topic or
// -t; a hostile one's are a comment that runs nothing.
func TestTopicCommandsInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	const stubs = `kafka-transactions.sh() { printf 'txn'; printf ' <%s>' "$@"; echo; }
kafka-topics.sh() { printf 'topics'; printf ' <%s>' "$@"; echo; }
kcat() { printf 'kcat'; printf ' <%s>' "$@"; echo; }
BOOTSTRAP='k:9092'
`
	run := func(cmd string) (string, []string) {
		dir := t.TempDir()
		c := exec.Command(bash, "-c", stubs+cmd)
		c.Dir = dir
		out, err := c.Output()
		if err != nil {
			t.Errorf("bash %q: %v", cmd, err)
		}
		ents, _ := os.ReadDir(dir)
		var files []string
		for _, e := range ents {
			files = append(files, e.Name())
		}
		return string(out), files
	}
	all := func(c TopicCommands) []string {
		return []string{c.AbortStart(4), c.AbortStartAfterDescribe(), c.AbortProducer(9, 2, 3), c.DescribeProducers(),
			c.KcatPrint(4, 2), c.DescribeAndKcatPrint(4, 2), c.DescribeTopic(),
			// A range of 6 offsets holding 2 records (compacted), one emptied,
			// one past the most printed.
			c.KcatPrintRanges([]diagnosis.PrintRange{{OffsetRange: txnindex.OffsetRange{From: 4, To: 9}, Records: 2}, {OffsetRange: txnindex.OffsetRange{From: 11, To: 11}, Records: 0}, {OffsetRange: txnindex.OffsetRange{From: 12, To: 14}, Records: 3}, {OffsetRange: txnindex.OffsetRange{From: 20, To: 21}, Records: 2}}, 2)}
	}
	legal := NewTopicCommands("", "orders.eu_1-x", 3)
	want := []string{
		"txn <--bootstrap-server> <k:9092> <abort> <--topic> <orders.eu_1-x> <--partition> <3> <--start-offset> <4>\n",
		"txn <--bootstrap-server> <k:9092> <describe-producers> <--topic> <orders.eu_1-x> <--partition> <3>\n" +
			"txn <--bootstrap-server> <k:9092> <abort> <--topic> <orders.eu_1-x> <--partition> <3> <--start-offset> <7>\n",
		"txn <--bootstrap-server> <k:9092> <abort> <--topic> <orders.eu_1-x> <--partition> <3> <--producer-id> <9> <--producer-epoch> <2> <--coordinator-epoch> <3>\n",
		"txn <--bootstrap-server> <k:9092> <describe-producers> <--topic> <orders.eu_1-x> <--partition> <3>\n",
		"kcat <-C> <-b> <k:9092> <-t> <orders.eu_1-x> <-p> <3> <-o> <4> <-c> <2> <-X> <isolation.level=read_uncommitted> <-f> <%o %k %s\\n>\n",
		"txn <--bootstrap-server> <k:9092> <describe-producers> <--topic> <orders.eu_1-x> <--partition> <3>\n" +
			"kcat <-C> <-b> <k:9092> <-t> <orders.eu_1-x> <-p> <3> <-o> <4> <-c> <2> <-X> <isolation.level=read_uncommitted> <-f> <%o %k %s\\n>\n",
		"topics <--bootstrap-server> <k:9092> <--describe> <--topic> <orders.eu_1-x>\n",
		"kcat <-C> <-b> <k:9092> <-t> <orders.eu_1-x> <-p> <3> <-o> <4> <-c> <2> <-X> <isolation.level=read_uncommitted> <-f> <%o %k %s\\n>\n" +
			"kcat <-C> <-b> <k:9092> <-t> <orders.eu_1-x> <-p> <3> <-o> <12> <-c> <3> <-X> <isolation.level=read_uncommitted> <-f> <%o %k %s\\n>\n",
	}
	for i, c := range all(legal) {
		// The reader fills in START from describe-producers' answer.
		if out, _ := run(strings.Replace(c, "START=  #", "START=7 #", 1)); out != want[i] {
			t.Errorf("%s\nran as %q\nwant    %q", c, out, want[i])
		}
	}
	// A bootstrap address is quoted too.
	if out, _ := run(NewTopicCommands("k:9092;touch canary", "t", 0).DescribeTopic()); out != "topics <--bootstrap-server> <k:9092;touch canary> <--describe> <--topic> <t>\n" {
		t.Errorf("hostile bootstrap ran as %q", out)
	}
	for _, topic := range []string{"orders;touch canary;#", "a`touch canary`b", "a\ntouch canary", "$(touch canary)", "\x1b]0;title\x07", "..", "", "a\xffb"} {
		c := NewTopicCommands("k:9092", topic, 0)
		if !strings.HasPrefix(c.Refused(), "# no command: topic name Kafka would reject: ") {
			t.Errorf("%q: refused %q", topic, c.Refused())
		}
		for _, cmd := range all(c) {
			if cmd != c.Refused() || strings.ContainsAny(cmd, "\n\r\x1b\x07") {
				t.Errorf("%q: command %q", topic, cmd)
			}
			if out, files := run(cmd); out != "" || len(files) != 0 {
				t.Errorf("%q: %q ran %q, made %q", topic, cmd, out, files)
			}
		}
	}
}
