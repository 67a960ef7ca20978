#!/usr/bin/env bash
# Puts nfpm (the .deb packager of `make package`) at the pinned version in
# bin/, built with go install; does nothing when bin/nfpm already is that
# version. Called by `make package` and scripts/install-test-deps.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
nfpm_version="v2.48.0"
nfpm_bin="$root/bin/nfpm"
have="$(go version -m "$nfpm_bin" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/goreleaser/nfpm/v2" { print $3 }' || true)"
if [ "$have" != "$nfpm_version" ]; then
	echo "install-nfpm: building nfpm $nfpm_version into bin/ with go install" >&2
	cd "$root"
	GOTOOLCHAIN=local GOBIN="$root/bin" go install "github.com/goreleaser/nfpm/v2/cmd/nfpm@$nfpm_version"
fi
