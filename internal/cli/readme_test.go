package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEShowsEveryScreenshot: the browser tests write their screenshots
// to docs/screenshots (screenshot in web_test.go), and the README must show
// each one, and show none that is not there, so a reader sees what every
// test saw.
func TestREADMEShowsEveryScreenshot(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, m := range regexp.MustCompile(`docs/screenshots/([A-Za-z0-9_.-]+\.png)`).FindAllStringSubmatch(string(readme), -1) {
		shown[m[1]] = true
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "screenshots", "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no screenshots in docs/screenshots")
	}
	have := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		have[name] = true
		if !shown[name] {
			t.Errorf("README.md does not show docs/screenshots/%s", name)
		}
	}
	for name := range shown {
		if !have[name] && !strings.Contains(name, "*") {
			t.Errorf("README.md shows docs/screenshots/%s, which does not exist", name)
		}
	}
}
