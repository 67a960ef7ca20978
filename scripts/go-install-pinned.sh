#!/usr/bin/env bash
# go-install-pinned.sh NAME MODULE PACKAGE VERSION: puts the program PACKAGE
# of MODULE at VERSION into bin/ with go install, unless bin/NAME already
# was built from MODULE at VERSION (go version -m tells). Used for the
# test tools built from source: MinIO, promtool, helm, nfpm.
set -euo pipefail

if [ $# -ne 4 ]; then
	echo "usage: $0 NAME MODULE PACKAGE VERSION" >&2
	exit 2
fi
name="$1" module="$2" package="$3" version="$4"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/bin/$name"
have="$(go version -m "$bin" 2>/dev/null | awk -v m="$module" '$1 == "mod" && $2 == m { print $3 }' || true)"
if [ "$have" = "$version" ]; then
	echo "install: $name $version: present ($bin)" >&2
else
	echo "install: $name $version: building into bin/ with go install (minutes the first time)" >&2
	cd "$root"
	GOTOOLCHAIN=local GOBIN="$root/bin" go install "$package@$version"
fi
