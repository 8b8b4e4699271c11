#!/usr/bin/env bash
# Type-check the installed package layout (memext, memext.engine,
# memext.tray) with mypy. mypy cannot follow setuptools' editable import
# hook, and the repository keeps engine/ and tray/ beside memext/, so the
# layout is rebuilt from symlinks under build/typecheck first.
set -euo pipefail
cd "$(dirname "$0")/.."
root=build/typecheck
rm -rf "$root"
mkdir -p "$root/memext"
for f in memext/*.py memext/py.typed; do
    ln -s "../../../$f" "$root/memext/$(basename "$f")"
done
ln -s ../../../engine "$root/memext/engine"
ln -s ../../../tray "$root/memext/tray"
MYPYPATH="$root" exec "${PYTHON:-python}" -m mypy "$@" -p memext
