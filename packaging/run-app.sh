#!/usr/bin/env bash
# `make run`: open the app on the built-in sample model and start a first run at once.
# Without a display, say so and show the same run in the terminal instead.
set -euo pipefail
bin="$1"

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ "$(uname)" = Linux ]; then
    echo "tflaunch: no display here (DISPLAY and WAYLAND_DISPLAY are unset), so the window"
    echo "cannot open. The same run, headless:"
    exec "$bin/tflaunch" bench --model sample:mlp
fi

if [ "$(uname)" = Linux ] && [ -n "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    # Qt's X11 plugin needs a few system libraries that minimal installs lack.
    plugin=$("$bin/python" -c 'import PySide6, pathlib; print(pathlib.Path(PySide6.__file__).parent / "Qt/plugins/platforms/libqxcb.so")')
    missing=$(ldd "$plugin" 2>/dev/null | awk '/not found/ {print $1}' || true)
    if [ -n "$missing" ]; then
        packages="libxcb-cursor0 libxkbcommon-x11-0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libegl1"
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "tflaunch: installing the X11 libraries Qt needs: $packages"
            apt-get install -y -q $packages >/dev/null
        else
            echo "tflaunch: Qt's X11 plugin is missing: $(echo $missing | tr '\n' ' ')" >&2
            echo "Install them with: sudo apt-get install $packages" >&2
            exit 1
        fi
    fi
fi

exec "$bin/tflaunch" gui --model sample:mlp --run
