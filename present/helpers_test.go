package present

import "github.com/txnscope/txnscope/txnindex"

// The producers of the tests' logs (testfixture.NewLog).
const (
	p1 txnindex.ProducerID = 1
	p2 txnindex.ProducerID = 2
	p3 txnindex.ProducerID = 3
)
