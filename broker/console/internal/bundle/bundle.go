// Package bundle builds the console's front end: ui/src (Preact + htm,
// from ui/node_modules) into the three files of dist/ that the console
// embeds, with esbuild's Go API, so no Node runs at build or run time
// (npm only fetches the packages, as package-lock.json pins them).
package bundle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// Files are the names Build returns, in dist/.
var Files = []string{"index.html", "app.js", "app.css"}

// Build bundles the front end of the console package in dir (the
// directory holding ui/ and dist/) and returns dist's files by name.
func Build(dir string) (map[string][]byte, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	ui := filepath.Join(dir, "ui")
	if _, err := os.Stat(filepath.Join(ui, "node_modules", "preact")); err != nil {
		return nil, fmt.Errorf("bundle: %s/node_modules is missing; run npm ci there (scripts/install-test-deps.sh does): %w", ui, err)
	}
	res := api.Build(api.BuildOptions{
		AbsWorkingDir:     ui,
		EntryPoints:       []string{"src/app.js"},
		Outdir:            "out",
		Bundle:            true,
		Write:             false,
		Format:            api.FormatIIFE,
		Target:            api.ES2020,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		LegalComments:     api.LegalCommentsNone,
		Charset:           api.CharsetUTF8,
		LogLevel:          api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		var msgs []string
		for _, m := range api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage}) {
			msgs = append(msgs, strings.TrimSpace(m))
		}
		return nil, errors.New("bundle: esbuild: " + strings.Join(msgs, "\n"))
	}
	out := map[string][]byte{}
	for _, f := range res.OutputFiles {
		out[filepath.Base(f.Path)] = f.Contents
	}
	html, err := os.ReadFile(filepath.Join(ui, "src", "index.html"))
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	out["index.html"] = html
	for _, name := range Files {
		if _, ok := out[name]; !ok {
			return nil, fmt.Errorf("bundle: esbuild wrote no %s", name)
		}
	}
	return out, nil
}

// Write builds the front end of dir and writes it to dir/dist.
func Write(dir string) error {
	files, err := Build(dir)
	if err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, "dist", name), b, 0o644); err != nil {
			return fmt.Errorf("bundle: %w", err)
		}
	}
	return nil
}
