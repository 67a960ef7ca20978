// Command cmd rebuilds the console's dist/ from ui/ (`go generate
// ./broker/console`, run in that directory).
package main

import (
	"fmt"
	"os"

	"github.com/strata-streaming/strata/broker/console/internal/bundle"
)

func main() {
	if err := bundle.Write("."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
