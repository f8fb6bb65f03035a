// Command server is txnscope under the name `go run ./cmd/server` has
// always served: the same command table as cmd/txnscope (package cli).
package main

import (
	"os"

	"github.com/txnscope/txnscope/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
