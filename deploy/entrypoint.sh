#!/bin/sh
# Runs the bot as the unprivileged "bot" user. A volume mounted over /data
# (on Fly, a new volume is owned by root) is handed to that user first.
set -eu
if [ "$(id -u)" = 0 ]; then
	chown bot:bot /data
	exec su-exec bot:bot /usr/local/bin/bot "$@"
fi
exec /usr/local/bin/bot "$@"
