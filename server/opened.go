package server

import "github.com/txnscope/txnscope/loader/load"

// addOpened makes a source of each partition an Options.Opened holds,
// within the budget b on opening a listed partition in full.
func (c *catalog) addOpened(op Opened, b load.Budget) {
	if op.Index != nil {
		// catalog_lazy.go: its partitions opened as a --load's are.
		c.addLogDir(op.ID, load.NewLogDir(op.Index, load.Question{Kind: load.Whole, Position: -1, Segments: true}, b))
		return
	}
	if op.Path != "" {
		c.add(op.ID, op.Path, op.Contents)
		return
	}
	c.diags.SetEvidenceOf(op.Contents)
	srcs := sourcesOf(op.ID, op.Title, op.Contents)
	for _, s := range srcs {
		s.title = op.Title
	}
	c.put(srcs...)
}
