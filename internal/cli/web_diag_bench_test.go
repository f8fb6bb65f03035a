package cli

import (
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
)

// BenchmarkDiagnoseBig is what the index pays per request for the 1M-batch
// demo once it has been built.
func BenchmarkDiagnoseBig(b *testing.B) {
	l := bigDemo().get()
	b.ResetTimer()
	for b.Loop() {
		diagnosis.Diagnose(l, diagnosis.Options{Position: -1})
	}
}
