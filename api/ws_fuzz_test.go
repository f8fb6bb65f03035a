package api

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeClientMsg: any client message decodes without panicking into
// exactly one validated command or an error; a decoded command, written
// back as JSON, decodes to the same command.
func FuzzDecodeClientMsg(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/ws/*.json")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cmd, err := decodeClientMsg(b)
		if err != nil {
			return
		}
		var again []byte
		switch {
		case (cmd.viewport == nil) == (cmd.opts == nil):
			t.Fatalf("%q: want exactly one of viewport and options: %+v", b, cmd)
		case cmd.viewport != nil:
			if cmd.viewport.To < cmd.viewport.From {
				t.Fatalf("%q: viewport %+v", b, cmd.viewport)
			}
			again, _ = json.Marshal(map[string]any{"type": "viewport", "from": cmd.viewport.From, "to": cmd.viewport.To})
		default:
			o := optionsOf(*cmd.opts)
			again, _ = json.Marshal(map[string]any{"type": "options", "isolation": o.Isolation, "position": o.Position, "max_bytes": o.MaxBytes, "variant": o.Variant})
		}
		cmd2, err := decodeClientMsg(again)
		if err != nil {
			t.Fatalf("%q re-encoded as %s: %v", b, again, err)
		}
		if (cmd.viewport != nil && *cmd.viewport != *cmd2.viewport) || (cmd.opts != nil && *cmd.opts != *cmd2.opts) {
			t.Fatalf("%q: %+v, re-encoded %+v", b, cmd, cmd2)
		}
	})
}
