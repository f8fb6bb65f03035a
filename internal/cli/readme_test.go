package cli

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The README is the front door and docs/ holds the rest. These tests keep
// both true to the tree: every relative link resolves (anchors included),
// every screenshot is shown somewhere, every `txnscope …` command in a code
// block names a real subcommand and real flags, every `make X` a target.

// repoRoot is the repository root seen from this package's directory.
var repoRoot = filepath.Join("..", "..")

// docFiles returns README.md and every Markdown file under docs/, as paths
// relative to the repository root, slash-separated.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fencedBlock matches a fenced code block, its info string and its body.
var fencedBlock = regexp.MustCompile("(?ms)^```([^\\n]*)\\n(.*?)^```[ \\t]*$")

// prose is a Markdown text with its fenced code blocks and inline code
// blanked out: a link written inside code is an example, not a link.
func prose(md string) string {
	md = fencedBlock.ReplaceAllStringFunc(md, func(s string) string { return strings.Repeat("\n", strings.Count(s, "\n")) })
	return regexp.MustCompile("`[^`\\n]*`").ReplaceAllString(md, "``")
}

// links returns the targets of a Markdown text's links and images, and of
// its HTML href and src attributes (the screenshot tables).
func links(md string) []string {
	var out []string
	p := prose(md)
	for _, m := range regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`).FindAllStringSubmatch(p, -1) {
		out = append(out, m[1])
	}
	for _, m := range regexp.MustCompile(`(?:href|src)="([^"]+)"`).FindAllStringSubmatch(p, -1) {
		out = append(out, m[1])
	}
	return out
}

// anchors returns the heading anchors GitHub gives a Markdown file: the
// heading's text lowercased, punctuation dropped, spaces made hyphens, and
// a -1, -2 … suffix on repeats.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range strings.Split(fencedBlock.ReplaceAllString(md, ""), "\n") {
		text, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " ")
		if !ok || !strings.HasPrefix(l, "#") {
			continue
		}
		// Link text stands for the link: [words](target) → words.
		text = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(text, "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocLinks: every relative link of README.md and docs/**/*.md names a
// file of the tree, and its #anchor, if any, a heading of that file.
func TestDocLinks(t *testing.T) {
	files := docFiles(t)
	n := 0
	for _, doc := range files {
		for _, target := range links(readDoc(t, doc)) {
			u, err := url.Parse(target)
			if err != nil {
				t.Errorf("%s: link %q: %v", doc, target, err)
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				continue // another site's page: not checked offline
			}
			n++
			file := doc
			if u.Path != "" {
				file = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(doc), u.Path)))
				if strings.HasPrefix(file, "../") {
					t.Errorf("%s: link %q leaves the repository", doc, target)
					continue
				}
				if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(file))); err != nil {
					t.Errorf("%s: link %q: %s does not exist", doc, target, file)
					continue
				}
			}
			if u.Fragment != "" && strings.HasSuffix(file, ".md") && !anchors(readDoc(t, file))[u.Fragment] {
				t.Errorf("%s: link %q: %s has no heading whose anchor is #%s", doc, target, file, u.Fragment)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d relative links in %d files: is the link pattern still right?", n, len(files))
	}
}

// TestAnchors pins the anchor rule on the headings these docs use.
func TestAnchors(t *testing.T) {
	got := anchors("# Cluster mode: every partition ranked\n```\n# not a heading\n```\n## `decide --from` from the producer snapshot\n### Alerting rules\n## Run\n## Run\n")
	for _, want := range []string{"cluster-mode-every-partition-ranked", "decide---from-from-the-producer-snapshot", "alerting-rules", "run", "run-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a comment in a code block became a heading")
	}
}

// TestDocsShowEveryScreenshot: the pictures committed in docs/screenshots
// (`make screenshots` rewrites them from the browser tests) are each shown
// by README.md or a doc under docs/, so that a reader sees what every test
// saw and no picture is kept that nobody shows. That a shown picture exists
// is TestDocLinks' check.
func TestDocsShowEveryScreenshot(t *testing.T) {
	shown := map[string]bool{}
	for _, doc := range docFiles(t) {
		for _, target := range links(readDoc(t, doc)) {
			p := filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(doc), target)))
			if name, ok := strings.CutPrefix(p, "docs/screenshots/"); ok {
				shown[name] = true
			}
		}
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "screenshots", "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no screenshots in docs/screenshots")
	}
	for _, f := range files {
		if name := filepath.Base(f); !shown[name] {
			t.Errorf("no doc shows docs/screenshots/%s (README.md or docs/*.md)", name)
		}
	}
}

// TestREADMEFrontDoor: what a newcomer needs stays in the README, whatever
// else moves to docs/: a picture near the top, the install line, the two
// commands of a fresh machine, how to rewrite the screenshots, and a link to
// each of the docs that took the rest.
func TestREADMEFrontDoor(t *testing.T) {
	readme := readDoc(t, "README.md")
	head := readme[:min(len(readme), 3000)]
	if !regexp.MustCompile(`!\[[^\]]*\]\(docs/screenshots/[^)]+\.png\)`).MatchString(head) {
		t.Errorf("README.md shows no screenshot in its first 3,000 bytes")
	}
	for _, want := range []string{
		"go install github.com/txnscope/txnscope/cmd/txnscope@latest",
		"txnscope serve",
		"go run ./cmd/server",
		"make test",
		"make screenshots",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
	linked := map[string]bool{}
	for _, l := range links(readme) {
		path, _, _ := strings.Cut(l, "#")
		linked[path] = true
	}
	for _, doc := range []string{"cli", "ui", "diagnosis", "security", "benchmarks", "capture-format", "cluster-mode", "protocol", "scenarios"} {
		if !linked["docs/"+doc+".md"] {
			t.Errorf("README.md does not link docs/%s.md", doc)
		}
	}
}

// commandLines returns the txnscope command lines of a Markdown text: the
// lines of its fenced code blocks (continuation lines joined) and its
// inline code spans that run txnscope, each as its arguments (see
// commandArgs).
func commandLines(md string) [][]string {
	var out [][]string
	for _, block := range fencedBlock.FindAllStringSubmatch(md, -1) {
		if lang := strings.TrimSpace(block[1]); lang != "" && lang != "sh" && lang != "bash" && lang != "console" && lang != "text" {
			continue
		}
		for _, line := range strings.Split(strings.ReplaceAll(block[2], "\\\n", " "), "\n") {
			if args, ok := commandArgs(line); ok {
				out = append(out, args)
			}
		}
	}
	for _, m := range regexp.MustCompile("`([^`\\n]+)`").FindAllStringSubmatch(fencedBlock.ReplaceAllString(md, ""), -1) {
		if args, ok := commandArgs(m[1]); ok {
			out = append(out, args)
		}
	}
	return out
}

// commandArgs returns the arguments of a command line that runs txnscope
// (`txnscope …` or `go run ./cmd/server …`, after any VAR=value prefixes),
// up to the first pipe into another program, redirection, `&`, `;` or
// comment; ok is false for any other line.
func commandArgs(line string) (args []string, ok bool) {
	fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "$ "))
	for len(fields) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(fields[0]) {
		fields = fields[1:]
	}
	switch {
	case len(fields) > 0 && fields[0] == "txnscope":
		fields = fields[1:]
	case len(fields) > 2 && fields[0] == "go" && fields[1] == "run" && fields[2] == "./cmd/server":
		fields = fields[3:]
	default:
		return nil, false
	}
	args = []string{}
	for i, a := range fields {
		switch {
		case strings.HasPrefix(a, "#"), a == "&&", a == ";", a == "&", strings.HasPrefix(a, ">"), strings.HasPrefix(a, "2>"):
			return args, true
		case (a == "|" || a == `\|`) && (i+1 == len(fields) || !strings.HasPrefix(fields[i+1], "-")):
			// A pipe into another program (`\|` inside a table);
			// `PATH | --demo NAME` in a synopsis is an alternative and
			// reads on.
			return args, true
		}
		args = append(args, a)
	}
	return args, true
}

// flagsOf returns the flags a subcommand's --help lists, through the same
// run the binary calls.
func flagsOf(t *testing.T, sub string) map[string]bool {
	t.Helper()
	code, out, errOut := runArgs(t, sub, "--help")
	if code != 0 {
		t.Fatalf("%s --help: code %d: %s", sub, code, errOut)
	}
	flags := map[string]bool{"help": true}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9][a-z0-9-]*)`).FindAllStringSubmatch(out, -1) {
		flags[m[1]] = true
	}
	if len(flags) < 2 && sub != "version" {
		t.Fatalf("%s --help lists no flags:\n%s", sub, out)
	}
	return flags
}

// TestDocCommands: every txnscope command line in a code block or an
// inline code span of the README or a doc names a subcommand txnscope has
// and flags that subcommand takes, so that a recipe never fails on a
// renamed flag. A line whose first word is a flag runs serve, the default.
func TestDocCommands(t *testing.T) {
	subs := map[string]bool{}
	for _, c := range commands() {
		subs[c.name] = true
	}
	flags := map[string]map[string]bool{}
	checked := map[string]int{}
	for _, doc := range docFiles(t) {
		for _, args := range commandLines(readDoc(t, doc)) {
			sub := "serve"
			if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
				sub, args = args[0], args[1:]
			}
			if len(args) > 0 && (args[0] == "--version" || args[0] == "--help") && sub == "serve" {
				continue // the program's own flags
			}
			if sub == strings.ToUpper(sub) {
				continue // a placeholder: `txnscope COMMAND --help`
			}
			if !subs[sub] {
				t.Errorf("%s: txnscope %s: no such subcommand", doc, sub)
				continue
			}
			if flags[sub] == nil {
				flags[sub] = flagsOf(t, sub)
			}
			checked[doc]++
			for _, a := range args {
				a = strings.TrimLeft(a, "[(")
				name, ok := strings.CutPrefix(a, "--")
				if !ok {
					continue
				}
				name, _, _ = strings.Cut(name, "=")
				name = strings.TrimRight(name, "])")
				if !flags[sub][name] {
					t.Errorf("%s: txnscope %s --%s: %s has no such flag", doc, sub, name, sub)
				}
			}
		}
	}
	if checked["README.md"] < 5 || checked["docs/cli.md"] < 5 {
		t.Errorf("command lines checked per doc: %v; the README and docs/cli.md should have several", checked)
	}
}

// TestDocMakeTargets: every `make X` in a code block of the README or a
// doc is a target of the Makefile.
func TestDocMakeTargets(t *testing.T) {
	mk := readDoc(t, "Makefile")
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`).FindAllStringSubmatch(mk, -1) {
		targets[m[1]] = true
	}
	n := 0
	for _, doc := range docFiles(t) {
		for _, block := range fencedBlock.FindAllStringSubmatch(readDoc(t, doc), -1) {
			for _, m := range regexp.MustCompile(`(?m)(?:^|[;&|]\s*|^\S+=\S+\s+)make\s+([a-z][a-z0-9-]*)`).FindAllStringSubmatch(block[2], -1) {
				n++
				if !targets[m[1]] {
					t.Errorf("%s: make %s: no such target in the Makefile (%v)", doc, m[1], slices.Sorted(maps.Keys(targets)))
				}
			}
		}
	}
	if n == 0 {
		t.Errorf("no make command in any code block")
	}
}

// TestCommandLinesParse pins commandLines on the shapes the docs use.
func TestCommandLinesParse(t *testing.T) {
	md := "```sh\n" +
		"txnscope decide --format ndjson consumer.pcapng | jq -c .   # a comment\n" +
		"TXNSCOPE_SASL_PASSWORD=x txnscope serve --bootstrap kafka:9092 \\\n    --topic orders\n" +
		"go run ./cmd/server diagnose (PATH | --demo NAME) [--position N]\n" +
		"echo txnscope inspect\n" +
		"```\n" +
		"| `txnscope decide --counts DIR \\| md5sum` | and `txnscope watch --record` |\n"
	got := fmt.Sprint(commandLines(md))
	want := "[[decide --format ndjson consumer.pcapng] [serve --bootstrap kafka:9092 --topic orders] [diagnose (PATH | --demo NAME) [--position N]] [decide --counts DIR] [watch --record]]"
	if got != want {
		t.Errorf("commandLines:\n got %s\nwant %s", got, want)
	}
}
