"""A warm start's child: forked from the warm server (forkserver.py), it becomes the user's
`python SCRIPT`, `python -m MODULE` or `python -c CODE` as a fresh interpreter would.

What a fresh interpreter has that a fork of the server does not, and how each is made so:
- the launcher's stdio, working folder, environment, umask and resource limits (sent in
  the request);
- `__main__` as CPython's own: a new module with `__file__` absolute (3.9+), `__loader__`,
  `__spec__`; `sys.argv`, `sys.orig_argv`, `sys.path[0]` as the command line gives them;
- multiprocessing's folder of origin (a spawned worker finds the script from it) and its
  authentication key, and numpy's global random state: fresh per run, not the server's;
- an uncaught exception printed by `sys.excepthook` without the frames of this module, and
  an uncaught KeyboardInterrupt ending the process by SIGINT, as CPython ends;
- the end: non-daemon threads joined, atexit handlers run, streams flushed.
What cannot be made so is said: the script has no controlling terminal (opening /dev/tty
prints why); a live `inspect.stack()` shows the frames below the script (the README says).
Standard library only: it runs in the user's interpreter, where tflaunch may be absent.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import signal
import sys
import time
import types
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

_THIS_FILE = os.path.abspath(__file__)


def run_child(request: Dict[str, Any], fds: List[int], imported: Any = None) -> None:
    """In the forked child: become the user's program and never return. `imported`: what
    the server's import read (forkserver.Imported)."""
    code = 1
    interrupted = False
    try:
        _become_the_launch(request, fds, imported)
        code = _run_main(list(request["argv"]))
    except SystemExit as exc:
        code = _exit_code(exc)
    except KeyboardInterrupt as exc:
        _report(exc)
        interrupted = True
    except BaseException as exc:  # noqa: BLE001 - as an interpreter reports any uncaught exception
        _report(exc)
        code = 1
    _finish(code, interrupted)


def _become_the_launch(request: Dict[str, Any], fds: List[int], imported: Any) -> None:
    os.setpgid(0, 0)  # its own group: the client's signals and a cancel reach all it starts
    signal.pthread_sigmask(signal.SIG_SETMASK, [])  # a fresh process blocks no signal
    closed = [n for n in request.get("closed") or [] if n in (0, 1, 2)]
    stdio = [n for n in (0, 1, 2) if n not in closed]
    for target, fd in zip(stdio, fds):
        os.dup2(fd, target)
    for target in closed:  # the launcher's was closed: so is the script's, as cold
        try:
            os.close(target)
        except OSError:
            pass
    # A measured program's event channel: kept (at a number of its own), not inherited.
    events = os.dup(fds[len(stdio)]) if len(fds) > len(stdio) else None
    for fd in fds:
        if fd > 2:
            os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for name in ("SIGTERM", "SIGCHLD", "SIGHUP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGQUIT"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    # What the launcher ignores, a cold script inherits ignored through exec (nohup's SIGHUP;
    # Python itself leaves an ignored SIGINT alone): so does this one.
    for number in request.get("ignored") or []:
        if isinstance(number, int) and number not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(number, signal.SIG_IGN)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    if isinstance(request.get("umask"), int):
        os.umask(request["umask"])
    _set_limits(request.get("limits") or {})
    _set_priority(request)
    # The server's stdio objects wrapped its fds 0-2, which now are the client's: new
    # ones, made as a fresh interpreter makes them (None for a closed descriptor).
    sys.stdin, sys.stdout, sys.stderr = (None if fd in closed else _stream(fd, mode, old) for fd, mode, old in
                                         ((0, "r", sys.__stdin__), (1, "w", sys.__stdout__), (2, "w", sys.__stderr__)))
    for name in ("stdin", "stdout", "stderr"):  # a fresh interpreter's originals are these
        setattr(sys, f"__{name}__", getattr(sys, name))
    _fresh_process_state()
    _apply_tf_config(os.environ.get("TFLAUNCH_TF_CONFIG"))
    if events is not None:
        _observe(events, request.get("started"))
    global _IMPORT_READ, _IMPORT_FAMILIES, _TERMINAL
    _IMPORT_READ = frozenset(getattr(imported, "read", ()) or ())
    families = request.get("import_families")
    if isinstance(families, list) and all(isinstance(f, str) for f in families):
        _IMPORT_FAMILIES = tuple(families)
    _TERMINAL = bool(request.get("terminal"))
    sys.addaudithook(_say_what_differs)
    orig = request.get("orig_argv")
    if isinstance(orig, list) and all(isinstance(a, str) for a in orig):
        sys.orig_argv = list(orig)  # novermin: set, not read (3.8 has none to replace)


_IMPORT_READ: FrozenSet[str] = frozenset()
_IMPORT_FAMILIES: Tuple[str, ...] = ()  # prefixes (and whole names) native libraries read at load
_TERMINAL = False
_SAID: Set[str] = set()


def _say_what_differs(event: str, args: Any) -> None:
    """The differences a fork cannot remove, said when the script meets them (an audit
    hook: Python reports these events before they happen):
    - the launcher's terminal is the controlling terminal of its own session, which no
      process of another session (this one) can take, so /dev/tty cannot be opened (getpass);
    - a variable the server's import of TensorFlow and Keras read (or one of the families the
      native libraries they load read: OPENBLAS_*, OMP_*, ...), set by the script: the import
      already happened with the server's value (a cold start would see the script's)."""
    if event == "open" and _TERMINAL and args and args[0] in ("/dev/tty", b"/dev/tty"):
        _say_once("/dev/tty", "this script opens /dev/tty, which a warm start cannot give it (the terminal belongs "
                              "to the launcher's session); run it without --warm")
    elif event in ("os.putenv", "os.unsetenv") and args:
        name = args[0].decode(errors="replace") if isinstance(args[0], bytes) else str(args[0])
        if name in _IMPORT_READ or name.startswith(_IMPORT_FAMILIES):
            _say_once(name, f"this script sets {name}, which TensorFlow, Keras or a library they load may have read "
                            "in the warm server before the script ran (the import kept the server's value). Set it "
                            "before the launch, or run without --warm")


def _say_once(key: str, message: str) -> None:
    if key in _SAID:
        return
    _SAID.add(key)
    try:
        sys.stderr.write(f"tflaunch: {message}\n")
        sys.stderr.flush()
    except Exception:
        pass


def _set_limits(limits: Dict[str, Any]) -> None:
    """The launcher's resource limits (the server checked that each can be set)."""
    import resource

    for name, pair in limits.items():
        number = getattr(resource, name, None)
        if isinstance(number, int) and isinstance(pair, list) and len(pair) == 2:
            try:
                resource.setrlimit(number, (int(pair[0]), int(pair[1])))
            except (ValueError, OSError):
                pass


def _set_priority(request: Dict[str, Any]) -> None:
    """The launcher's niceness and OOM score (the server checked that each can be set:
    without privilege they only go up)."""
    nice = request.get("nice")
    if isinstance(nice, int):
        try:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        except OSError:
            pass
    oom = request.get("oom_score_adj")
    if isinstance(oom, int):
        try:
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write(str(oom))
        except OSError:
            pass


def _fresh_process_state() -> None:
    """What a new process would not share with its siblings."""
    mp_process = sys.modules.get("multiprocessing.process")
    if mp_process is not None:
        # Spawned workers find a relative script from here: the server's folder was /.
        mp_process.ORIGINAL_DIR = os.getcwd()  # type: ignore[attr-defined]
        current = mp_process.current_process()
        current._config["authkey"] = mp_process.AuthenticationString(os.urandom(32))
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        try:
            numpy_random.seed()  # from the OS's entropy, as numpy seeds itself at import
        except Exception:
            pass


def _stream(fd: int, mode: str, like: Any) -> Any:
    """A new text stream on `fd` as CPython's create_stdio makes one: named <stdin> and so
    on, newline "\\n" (no translation), the encoding and errors of the server's own (which
    the same variables decided), line-buffered on a terminal (stderr always) unless -u."""
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED")) and mode == "w"
    raw = open(fd, mode + "b", buffering=0 if unbuffered else -1, closefd=False)
    name = {0: "<stdin>", 1: "<stdout>", 2: "<stderr>"}[fd]
    try:
        setattr(getattr(raw, "raw", raw), "name", name)  # noqa: B010 - a property to type checkers
    except (AttributeError, TypeError):
        pass
    stream = io.TextIOWrapper(raw, encoding=getattr(like, "encoding", None), errors=getattr(like, "errors", None),
                              newline="\n", line_buffering=not unbuffered and (fd == 2 or os.isatty(fd)),
                              write_through=unbuffered)
    stream.mode = mode  # type: ignore[misc]  # as create_stdio sets it
    return stream


def _main_module(**attributes: Any) -> types.ModuleType:
    """A new `__main__`, in sys.modules as a fresh interpreter's is (pickle and spawned
    workers look it up there)."""
    main = types.ModuleType("__main__")
    main.__dict__.update({"__builtins__": builtins, "__spec__": None, "__package__": None, "__annotations__": {},
                          **attributes})
    sys.modules["__main__"] = main
    return main


def _run_main(argv: List[str]) -> int:
    """argv after the interpreter: SCRIPT ARGS, -m MODULE ARGS or -c CODE ARGS."""
    import importlib.machinery
    import runpy

    safe_path = bool(getattr(sys.flags, "safe_path", False))
    if argv[0] == "-m":
        sys.argv = ["-m", *argv[2:]]
        if not safe_path:
            sys.path.insert(0, os.getcwd())
        _main_module()
        runpy._run_module_as_main(argv[1], alter_argv=True)  # type: ignore[attr-defined]  # what -m calls
    elif argv[0] == "-c":
        sys.argv = ["-c", *argv[2:]]
        if not safe_path:
            sys.path.insert(0, "")
        main = _main_module(__loader__=importlib.machinery.BuiltinImporter)
        exec(compile(argv[1], "<string>", "exec"), main.__dict__)
    else:
        sys.argv = list(argv)
        # CPython joins a relative script path to the folder without normalising it
        # (./sub/s.py gives /cwd/./sub/s.py), and so must __file__ here.
        path = argv[0] if os.path.isabs(argv[0]) else os.path.join(os.getcwd(), argv[0])
        if os.path.isdir(path) or not path.endswith(".py") and _is_zip(path):
            # A folder or zip with __main__.py: CPython puts it first on sys.path (absolute)
            # and runs its __main__ as a module (runpy's own entry, argv[0] kept as typed).
            sys.path.insert(0, path)
            _main_module()
            runpy._run_module_as_main("__main__", alter_argv=False)  # type: ignore[attr-defined]
            return 0
        if not safe_path:
            sys.path.insert(0, os.path.dirname(os.path.realpath(path)))
        with open(path, "rb") as source:
            code = compile(source.read(), path, "exec")
        main = _main_module(__file__=path, __cached__=None,
                            __loader__=importlib.machinery.SourceFileLoader("__main__", path))
        exec(code, main.__dict__)
    return 0


def _is_zip(path: str) -> bool:
    import zipfile

    try:
        return zipfile.is_zipfile(path)
    except OSError:
        return False


def _exit_code(exc: SystemExit) -> int:
    """What an interpreter exits with for sys.exit(code); a non-number is printed first."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    try:
        sys.stderr.write(f"{exc.code}\n")
    except Exception:
        pass
    return 1


def _report(exc: BaseException) -> None:
    """sys.excepthook on the exception, its traceback starting where the user's code does
    (a fresh interpreter has no frames of ours under the script)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == _THIS_FILE:
        tb = tb.tb_next
    try:
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
    except Exception:
        pass


def _apply_tf_config(raw: Optional[str]) -> None:
    """The launch hook's tf.config settings, applied in the child as the hook would."""
    if not raw or "tensorflow" not in sys.modules:
        return
    try:
        _probe_module("tf_setup").apply_tf_config(sys.modules["tensorflow"], json.loads(raw))
    except Exception as exc:  # the script runs even if a setting cannot be applied, as cold
        sys.stderr.write(f"tflaunch: could not apply the launch profile's TensorFlow settings: {exc}\n")


def _observe(fd: int, started: Any) -> None:
    """The launch hook's observer in a warm child: the program's phases from the fork on
    (TensorFlow and Keras are imported already: no import phase, which this launch did not pay)."""
    os.environ.pop("TFLAUNCH_EVENTS_FD", None)
    raw = os.environ.pop("TFLAUNCH_OBSERVE", None)
    try:
        settings = json.loads(raw) if raw else {}
        age = time.time() - float(started) if isinstance(started, (int, float)) else None
        observe = _probe_module("observer.observe_install")
        observe.warm_start(observe.install(fd, settings, age))
    except Exception as exc:  # the script runs unobserved rather than not at all
        sys.stderr.write(f"tflaunch: cannot observe this program ({type(exc).__name__}: {exc}); it runs unobserved\n")


def _probe_module(name: str) -> Any:
    """A module of the probe package, loaded by location as the probe and the launch hook
    load it (neither folder is on sys.path). `name` is relative to the package
    ("tf_setup", "observer.observe_install")."""
    import importlib
    import importlib.util

    here = os.path.dirname(os.path.dirname(_THIS_FILE))  # the probe's folder, above this room
    spec = importlib.util.spec_from_file_location("tflaunch_probe_entry", os.path.join(here, "__main__.py"))
    assert spec is not None and spec.loader is not None
    entry = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(entry)
    return importlib.import_module(entry.load_package().__name__ + "." + name)


def _flush() -> None:
    # The originals too: a script that replaced sys.stdout left its buffered text there.
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass


def _clear_main() -> None:
    """What interpreter shutdown does to __main__ before the process ends: its globals
    dropped (names starting with one underscore first, as CPython clears a module), so
    __del__ methods run and unclosed files warn as they would cold."""
    import gc

    main = sys.modules.get("__main__")
    names = list(getattr(main, "__dict__", {}))
    try:
        for first in (True, False):
            # Later names first: an object's __del__ still finds the modules it imported.
            for name in reversed(names):
                if name != "__builtins__" and (name.startswith("_") and not name.startswith("__")) == first:
                    main.__dict__[name] = None
        gc.collect()
    except BaseException:
        pass


def _finish(code: int, interrupted: bool = False) -> None:
    """End as an interpreter ends: wait for non-daemon threads, run atexit, flush; after an
    uncaught Ctrl+C, by SIGINT (so a shell sees 130 and stops a loop)."""
    import atexit
    import threading

    try:
        threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter calls at exit
    except BaseException:
        pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    _clear_main()
    _flush()
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)
