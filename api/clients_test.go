package api

import (
	"strings"
	"testing"
)

// TestDecisionsClientVariants: GET .../decisions?variant= takes the client
// variants: kafka-go delivers the aborted records at 2-4 with its reason,
// kafkajs skips them (its own words), and an unknown client is a 400.
func TestDecisionsClientVariants(t *testing.T) {
	srv, _ := server(t, fakeCatalog{"small": small()}, nil, nil)
	base := srv.URL + "/api/v1/sources/small/partitions/t/0/decisions?from=2&to=2"
	for _, c := range []struct {
		variant, decision, cause, reason string
	}{
		{"kafka-go", "delivered", "aborted_delivered", "kafka-go delivers this aborted record"},
		{"kafka-python", "delivered", "aborted_delivered", "no read_committed"},
		{"kafkajs", "aborted", "aborted_transaction", "kafkajs skips it"},
	} {
		ds := ndjson(t, base+"&variant="+c.variant)
		if len(ds) != 1 || ds[0].Decision != c.decision || ds[0].Cause != c.cause || !strings.Contains(ds[0].Reason, c.reason) {
			t.Errorf("%s: %+v", c.variant, ds)
		}
	}
	get(t, base+"&variant=kafka-java", 400)
}
