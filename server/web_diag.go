package server

import (
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/web"
)

// Built hands the index a partition's log only when it has been built, so
// that listing partitions by LSO lag never builds the 1M-batch demo
// (web.BuiltCatalog).
func (c webCatalog) Built(id, topic string, partition int32) (*txnindex.Log, bool) {
	if s := c.find(id, topic, partition); s != nil {
		if l := s.built(); l != nil {
			return l, true
		}
	}
	return nil, false
}

var _ web.BuiltCatalog = webCatalog{}
