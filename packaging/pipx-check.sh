#!/usr/bin/env bash
# `make pipx-check`: install tflaunch with pipx from a clean clone, as a user would, and check
# that the installed commands, the bundled resources and the desktop entry's Exec work.
set -euo pipefail
bin="$1"
"$bin/python" -m pip install --quiet pipx
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$(git rev-parse --show-toplevel)" "$work/clone"
export PIPX_HOME="$work/pipx" PIPX_BIN_DIR="$work/bin" PIPX_MAN_DIR="$work/man"
"$bin/pipx" install --quiet "$work/clone"
"$work/bin/tflaunch" --help >/dev/null
"$work/bin/tflaunch" devices
"$work/bin/tflaunch" bench --model sample:mlp --repeat 1 --no-history
exec_line=$(sed -n 's/^Exec=//p' "$work/clone/packaging/linux/io.github.tflaunch.tflaunch.desktop")
test -x "$work/bin/${exec_line%% *}"
QT_QPA_PLATFORM=offscreen TFLAUNCH_EXIT_AFTER_PAINT=1 "$work/bin/${exec_line%% *}"
echo "pipx-check: pipx install from a clean clone works (tflaunch, tflaunch-gui, resources)."
