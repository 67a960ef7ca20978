#!/bin/sh
# Before removal: stop the service. Data in /var/lib/strata and the strata
# user stay (a purge of data is the operator's decision).
set -e
if [ -d /run/systemd/system ]; then
	systemctl stop strata.service >/dev/null 2>&1 || true
fi
