#!/usr/bin/env bash
# Puts nfpm (the .deb packager of `make package`) at the pinned version in
# bin/ (scripts/go-install-pinned.sh). Called by `make package` and
# scripts/install-test-deps.sh.
set -euo pipefail
"$(dirname "${BASH_SOURCE[0]}")/go-install-pinned.sh" nfpm github.com/goreleaser/nfpm/v2 github.com/goreleaser/nfpm/v2/cmd/nfpm v2.48.0
