package scenario

import (
	"bytes"
	"embed"
	"path"
	"sort"
	"strings"
)

//go:embed demos/*.txn
var demoFiles embed.FS

// Demos parses the embedded demo scenarios, sorted by name.
func Demos() ([]*Scenario, error) {
	ents, err := demoFiles.ReadDir("demos")
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	for _, e := range ents {
		b, err := demoFiles.ReadFile(path.Join("demos", e.Name()))
		if err != nil {
			return nil, err
		}
		s, err := Parse(bytes.NewReader(b), e.Name())
		if err != nil {
			return nil, err
		}
		s.Name = strings.TrimSuffix(e.Name(), ".txn")
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
