package server

import (
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
)

// BenchmarkDiagnoseBig is what the index pays per request for the 1M-batch
// demo once it has been built.
func BenchmarkDiagnoseBig(b *testing.B) {
	l := bigDemo().get()
	b.ResetTimer()
	for b.Loop() {
		present.Diagnose(l, diagnosis.Options{Position: -1})
	}
}
