#!/bin/sh
# After the .deb is unpacked: the service's system user owns its data and
# can read its configuration; systemd learns of the unit (not started: edit
# /etc/strata/server.properties first, then `systemctl enable --now strata`).
set -e
if ! getent passwd strata >/dev/null; then
	adduser --system --group --home /var/lib/strata --no-create-home --quiet strata
fi
chown strata:strata /var/lib/strata
chgrp strata /etc/strata/server.properties
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null || true
fi
