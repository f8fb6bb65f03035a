package web

import (
	"strings"
	"testing"

	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
)

// TestClientNamesAreOneEverywhere: the timeline's rules selector names each
// consumer variant as the runbook, the clients page and the lessons do
// (present.ClientWords): one name a person reads for kafka-python 2.0,
// whose rules the variant plays, wherever it appears.
func TestClientNamesAreOneEverywhere(t *testing.T) {
	ui := New(fakeCatalog{testLog()}, view.NewDiagnoser())
	body := serve(t, ui.Timeline(), "/sources/demo/partitions/t/0", 200)
	for _, v := range txnindex.Variants {
		want := `<option value="` + v.String() + `">` + present.ClientWords(v) + `</option>`
		if !strings.Contains(body, want) {
			t.Errorf("the rules selector lacks %s", want)
		}
	}
}
