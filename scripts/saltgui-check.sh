#!/usr/bin/env bash
# saltgui-check.sh [DIR]: issue 16's SaltGUI check. Fetches SaltGUI
# (https://github.com/erwindon/SaltGUI, a static web app for salt-api) into
# a scratch folder (DIR, default $GSALT_SALTGUI_DIR or
# /tmp/gsalt-saltgui; an existing checkout is reused, nothing goes into the
# repository), makes sure Debian's chromium is there (apt-get as root), then
# runs netapi's TestSaltGUI: gsalt-api serves SaltGUI through
# rest_cherrypy's app/static options, headless Chromium logs in, checks the
# minions page, runs test.ping from the command box, opens the keys and
# jobs pages, and sees a webhook's event on the events page. Screenshots go to $GSALT_SALTGUI_SHOTS (default
# /tmp/gsalt-saltgui-shots).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-${GSALT_SALTGUI_DIR:-/tmp/gsalt-saltgui}}
shots=${GSALT_SALTGUI_SHOTS:-/tmp/gsalt-saltgui-shots}
if [ ! -f "$dir/saltgui/index.html" ]; then
  rm -rf "$dir"
  git clone --depth 1 https://github.com/erwindon/SaltGUI "$dir"
fi
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y chromium; else echo "saltgui-check: install chromium (apt-get install chromium)"; exit 1; fi
fi
mkdir -p "$shots"
echo "saltgui-check: SaltGUI $(git -C "$dir" log -1 --format='%h %cs' 2>/dev/null || echo '(not a git checkout)') in $dir"
GSALT_SALTGUI_DIR=$dir GSALT_SALTGUI_SHOTS=$shots go test -count=1 -v -run '^TestSaltGUI$' ./netapi/
echo "saltgui-check: screenshots in $shots"
