#!/usr/bin/env bash
# System packages the tests need (Debian/Ubuntu): a real browser for the
# widget test, a real X server, tray host and D-Bus for the tray test, and
# the GTK introspection headers PyGObject builds against.
set -euo pipefail
PKGS=(
  chromium
  xvfb xauth openbox tint2 dbus dbus-x11 x11-utils xdotool
  libgirepository1.0-dev libcairo2-dev pkg-config gir1.2-gtk-3.0
  gir1.2-ayatanaappindicator3-0.1
  dunst
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "install-system-deps: no apt-get; install these yourself: ${missing[*]}" >&2
  exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-system-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
