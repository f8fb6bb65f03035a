// Command txnscope loads Kafka partition data, decides for every offset what
// a consumer receives and why, explains stuck LSOs, and serves the timeline.
// `txnscope --help` lists the subcommands (package cli holds the table).
package main

import (
	"os"

	"github.com/txnscope/txnscope/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
