package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time by the Makefile:
//
//	go build -ldflags "-X main.version=$(git describe --tags --always --dirty)"
//
// A plain `go build` or `go install` leaves it "dev".
var version = "dev"

// commit is the Makefile's fallback for the commit (-X main.commit=...):
// the toolchain's own VCS stamp (vcs.revision) is missing when the build
// runs with -buildvcs=false, as GOFLAGS sets on some machines.
var commit = ""

func init() { rootCmd.AddCommand(newVersionCmd()) }

// buildInfo is what `strata version` reports.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`              // vcs.revision, "unknown" without VCS stamping
	Modified  bool   `json:"modified"`            // vcs.modified: built from a dirty tree
	BuildTime string `json:"buildTime,omitempty"` // vcs.time: the commit's time
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"` // GOOS/GOARCH
}

// readBuildInfo combines the linked-in version with what the Go toolchain
// stamped into the binary (debug.ReadBuildInfo: vcs.* settings, Go version).
func readBuildInfo() buildInfo {
	info := buildInfo{
		Version:   version,
		Commit:    "unknown",
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if commit != "" {
		info.Commit = commit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		case "vcs.time":
			info.BuildTime = s.Value
		}
	}
	// `go install module@vX.Y.Z` stamps the module version but no VCS data.
	if info.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	return info
}

func newVersionCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of this binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			info := readBuildInfo()
			out := cmd.OutOrStdout()
			switch output {
			case "text", "":
				commit := info.Commit
				if info.Modified {
					commit += " (modified)"
				}
				fmt.Fprintf(out, "strata %s\ncommit: %s\ngo: %s %s\n", info.Version, commit, info.GoVersion, info.Platform)
				return nil
			case "json":
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			default:
				return fmt.Errorf("--output %q: want text or json", output)
			}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}
