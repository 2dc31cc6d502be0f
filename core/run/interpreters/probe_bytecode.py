"""tflaunch's own code in a measured child, compiled once for the interpreter that runs it.

Every measured child imports the launch hook and the observer (or the probe) before the
program runs a line. Python compiles a module from source on each start unless it finds its
bytecode cache, and it writes none when PYTHONDONTWRITEBYTECODE is set (common in
containers and on clusters, and on the machines tflaunch is tested on): each launch then
paid about 0.1 s of compiling under load, counted against watching. The launch check
compiles those folders with the chosen interpreter (its cache tag: cpython-38 to
cpython-313), once per interpreter in a process; compileall writes whatever the variable
says and skips what is current, so the next checks cost one interpreter start. Where
tflaunch's folders cannot be written nothing changes but that cost, so a failure is never
an error.
"""

from __future__ import annotations

import functools
import subprocess

from ...settings.child import HOOK_DIR, PROBE_DIR


def compile_command(python: str) -> list[str]:
    """The command that compiles the probe and the launch hook for `python` (the app runs it
    in the background when an interpreter is chosen)."""
    return [python, "-m", "compileall", "-q", str(PROBE_DIR), str(HOOK_DIR)]


@functools.lru_cache(maxsize=32)
def compile_for(python: str) -> bool:
    """Compile the probe and the launch hook for `python`, blocking; whether it could."""
    try:
        done = subprocess.run(compile_command(python), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=60)
    except (OSError, subprocess.SubprocessError, ValueError):
        return False
    return done.returncode == 0
