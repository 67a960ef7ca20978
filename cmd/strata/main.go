// Command strata is the one Strata binary: the broker (`strata server`) and
// the tools that talk to it over the Kafka protocol (topic, produce, consume,
// perf, …).
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// rootCmd is the top of the command tree; every command file adds itself in
// its init function.
var rootCmd = &cobra.Command{
	Use:           "strata",
	Short:         "Strata: a Kafka-compatible streaming platform with tiered storage",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	// STRATA_CPUPROFILE=file profiles any command (perf tools included).
	if path := os.Getenv("STRATA_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	addAddonFlags()
	if err := rootCmd.Execute(); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintf(os.Stderr, "strata: %v\n", err)
		os.Exit(1)
	}
}
