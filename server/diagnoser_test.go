package server

import (
	"context"
	"net/http/httptest"
	"testing"
)

// TestOneDiagnoserPerServer: a server's pages and its diagnosis API
// diagnose through the one Diagnoser New made: the panel computes into
// it, the API asked after the panel with the same options serves the
// panel's computation, and with other options computes into it too; and
// another server's diagnoses are its own.
func TestOneDiagnoserPerServer(t *testing.T) {
	newServer := func() (*Server, *httptest.Server) {
		o := DefaultOptions()
		o.Big = false
		s, err := New(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		srv := httptest.NewServer(s.Handler())
		t.Cleanup(srv.Close)
		return s, srv
	}
	s, srv := newServer()
	other, _ := newServer()
	const part = "/sources/stuck-lso/partitions/demo-stuck-lso/0/diagnosis?now=log"
	getPage(t, srv.URL+part)
	if c := s.diags.Computations(); c != 1 {
		t.Fatalf("the panel: %d computations of the server's, want 1", c)
	}
	var d struct {
		Runbook string `json:"runbook"`
	}
	getJSONInto(t, srv.URL+"/api/v1"+part, &d)
	if c := s.diags.Computations(); c != 1 || d.Runbook == "" {
		t.Errorf("the API after the panel: %d computations, want 1; runbook %q", c, d.Runbook)
	}
	getJSONInto(t, srv.URL+"/api/v1"+part+"&bootstrap=k:9092", &d)
	if c := s.diags.Computations(); c != 2 {
		t.Errorf("the API with other options: %d computations of the server's, want 2", c)
	}
	if c := other.diags.Computations(); c != 0 {
		t.Errorf("another server computed %d diagnoses for this one's requests", c)
	}
}
