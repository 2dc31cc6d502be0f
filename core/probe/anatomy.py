"""The anatomy of a first step or first call: TensorFlow's own trace, cut into named parts.

An opt-in extra run (never the measured one: the profiler costs time) starts TensorFlow's
profiler after `import tensorflow` (:func:`start`), and at the ready point (:func:`finish`)
stops it, reads the XPlane file it wrote with the ``xplane_pb2`` module TensorFlow ships, and
gives the EXCLUSIVE time of the window (the first step, or the first call) to parts by the
rules in :data:`RULES`. Only the thread that ran the window is read: its events nest, and the
innermost event at each instant owns that instant, so the parts never overlap and, with what
no event covers ("not attributed": the program's own Python between TensorFlow's calls, or
an event no rule names), add up to the window exactly. Other threads (the executor's pool,
tf.data's) run beside it; their time is not the wait the user sees.

Standard library and TensorFlow only; Python 3.8 syntax, like the rest of the probe.
"""

import functools
import importlib
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

# Parts, in the order views list them; the keys are the protocol's (core/run/anatomy.py).
PARTS = ("tracing", "instantiation", "xla", "variables", "data", "execution",
         "gpu_handles", "gpu_autotune", "gpu_modules", "gpu_allocator", "gpu_copies")
NOT_ATTRIBUTED = "not_attributed"
MARKER = "tflaunch.anatomy.window"  # a TraceMe made on the window's thread: how its line is found
NAMES_PER_PART = 5  # the largest event names kept per part, to say what the part was made of
# A folder the launcher gives for the profiler's log (`bench --tensorboard`): written there
# and left for it to keep, instead of a temporary folder removed once read.
KEEP_ENV = "TFLAUNCH_ANATOMY_LOGDIR"
# The folder tflaunch made for this run's trace (core/run/session.py, 0700, removed when the
# run ends whatever the child did); the profiler writes into a fresh folder of its own in it.
LOG_FOLDER_ENV = "TFLAUNCH_ANATOMY_DIR"
MOST_TRACE_BYTES = 256 << 20  # a first step's trace is megabytes; parsed whole, it takes ~1.6x in memory
TRACE_RUN_FORMAT = "%Y_%m_%d_%H_%M_%S"  # the profiler's run folder: plugins/profile/<run id>/<host>.xplane.pb
OURS_RUNNING = ("Another profiler is running: tflaunch's, which records this run's first step or first call "
                "(an anatomy run: bench --anatomy, the app's Anatomy). Measure without --anatomy to profile it "
                "yourself.")

# name -> part, first match wins. `None` as the part: the event is a wrapper (a binding or a
# dispatch) whose own time belongs to whatever encloses it; at the top of the thread, where
# nothing encloses it, it is TensorFlow's eager dispatch, hence execution.
# Names from TensorFlow 2.21's host tracer (level 3) and CUPTI's driver API names on a GPU.
RULES: Tuple[Tuple[str, Optional[str]], ...] = (
    (r"XlaCompil|_XlaCompile|DeviceCompiler|RunHloPasses|RunBackend|HloPass|xla::.*Compile|XlaAutoJit"
     r"|^(Cpu|Gpu|Jit|Fusion)Compiler::", "xla"),
    (r"cublas\w*Create|cudnnCreate|cuCtxCreate|cuDevicePrimaryCtxRetain|cusolver\w*Create|cufftPlan"
     r"|CudnnSupport::Init|BlasLt.*Init", "gpu_handles"),
    (r"(?i)autotun|cudnnFind|AlgorithmPicker|cudnnGetConvolution\w*Algorithm", "gpu_autotune"),
    (r"cuModuleLoad|cuModuleGetFunction|cuLibraryLoad|cuLibraryGetKernel|cuLink|nvrtc|ptxas|nvPTXCompiler",
     "gpu_modules"),
    (r"cuMemAlloc|cuMemCreate|cuMemMap|cuMemAddressReserve|cuMemPool|cuMemHostAlloc|BFCAllocator::Extend",
     "gpu_allocator"),
    (r"cuMemcpy|MemcpyH2D|MemcpyD2H|MemcpyHtoD|MemcpyDtoH", "gpu_copies"),
    (r"(?i)grappler|MetaOptimizer", "instantiation"),
    (r"^EagerLocalExecute: __inference_initialize_variables", "variables"),
    (r"^EagerLocalExecute: __inference_|Instantiate|OptimizeGraph|PartitionFunctionGraph"
     r"|ProcessFunctionLibraryRuntime", "instantiation"),
    (r"^EagerLocalExecute: (VarHandleOp|VarIsInitializedOp|AssignVariableOp)$", "variables"),
    (r"^EagerLocalExecute: (MakeIterator|AnonymousIterator\w*|IteratorGetNext\w*|DatasetCardinality"
     r"|Optional(HasValue|GetValue)|\w*Dataset\w*)$|^MakeIterator|^Iterator::|IteratorGetNext|^Prefetch", "data"),
    (r"^tf\.function-graph_building$|[Aa]uto[Gg]raph|^tf_function_trace", "tracing"),
    (r"^(EagerKernelExecute|KernelAndDevice\w*::Run|FunctionRun|ExecutorDoneCallback|TFE_DeleteTensorHandle)$"
     r"|^ExecutorState::|^ParallelFor|^EagerLocalExecute: |^[\w/.\-]+:[A-Z_]\w*$", "execution"),
    (r"^(convert_to_tensor|tf\.constant|TFE_Py_\w+|EagerExecute|EagerCopyToDevice|ValidateInputTypeAndPlacement"
     r"|ThreadpoolListener::\w+)$", None),
)
_COMPILED = [(re.compile(pattern), part) for pattern, part in RULES]
_UNKNOWN = "?"  # no rule names it: its own time is not attributed
_OWN_KERNELS = ("data", "variables")  # parts whose kernels' run is theirs, not execution's
# One-time work TensorFlow does on a thread of its own while the window's thread waits for a
# function to run (XLA compiles on the executor's pool, autotuning and module loading where
# the kernel first runs): the wait's time goes to that work where the two overlap.
SIDE_PARTS = ("xla", "gpu_handles", "gpu_autotune", "gpu_modules", "gpu_allocator", "gpu_copies")
_WAITS = re.compile(r"^(EagerKernelExecute|KernelAndDevice\w*::Run|FunctionRun|TFE_DeleteTensorHandle)$")


def part_of(name: str, stats: Dict[str, Any]) -> Optional[str]:
    """The part an event's own time goes to; None for a wrapper, "?" for no rule.

    A tf.function's call (the Python tracer-free event named for the function, with a
    `tf_function_call` stat) is dispatch: on a first call, argument binding and the lookup
    that decides to trace, hence tracing."""
    for pattern, part in _COMPILED:
        if pattern.search(name):
            return part
    if "tf_function_call" in stats:
        return "tracing"
    return _UNKNOWN


# -- the profiler, in the child ------------------------------------------------------------
_LOGDIR: Optional[str] = None
_START_ERROR = "it was not started"  # why there is no profile to read, until start() succeeds


def start(tf: Any) -> Optional[str]:
    """Start TensorFlow's profiler into a fresh folder; a reason when it cannot, else None.

    host_tracer_level 3 records TensorFlow's own TraceMe events down to the verbose ones
    (graph building, instantiation, kernel execution); the Python tracer stays off: it would
    make every Python call an event, costing more than the parts it would show."""
    global _LOGDIR, _START_ERROR
    try:
        _LOGDIR = os.environ.get(KEEP_ENV) or tempfile.mkdtemp(prefix="trace-", dir=_private_folder())
        options = tf.profiler.experimental.ProfilerOptions(host_tracer_level=3, python_tracer_level=0,
                                                           device_tracer_level=1)
        tf.profiler.experimental.start(_LOGDIR, options=options)
        _name_ours(tf)
        return None
    except Exception as exc:  # the run goes on unprofiled; finish says why
        _LOGDIR = None
        _START_ERROR = f"{type(exc).__name__}: {exc}"
        return _START_ERROR


def finish(tf: Any, window_start: float, window_end: float) -> Dict[str, Any]:
    """Stop the profiler and attribute the window (wall clock, time.time()) to parts: the
    fields of an `anatomy` event (an `error` field instead of parts when it cannot)."""
    global _LOGDIR
    logdir, _LOGDIR = _LOGDIR, None
    window = max(0.0, window_end - window_start)
    if logdir is None:
        return {"window": window, "error": f"the profiler did not start: {_START_ERROR}"}
    try:
        try:
            # The marker's own wall clock: where a trace keeps no start time (TensorFlow 2.15 and
            # older), the marker event anchors its relative timestamps to time.time().
            marker_at = time.time()
            with tf.profiler.experimental.Trace(MARKER):
                pass  # an event on this thread: the window's thread is the marker's line
            stopping = time.time()
            _unname_ours(tf)
            tf.profiler.experimental.stop()
        except Exception as exc:
            return {"window": window, "error": f"the profiler did not stop: {type(exc).__name__}: {exc}"}
        data = _read_own_trace(logdir, stopping)
        if isinstance(data, str):
            return {"window": window, "error": data}
        space = _xplane_pb2().XSpace()
        space.ParseFromString(data)
        result = attribute(space, window_start, window_end, marker_at)
        result["trace_bytes"] = len(data)
        return result
    except Exception as exc:
        return {"window": window, "error": f"the trace could not be read: {type(exc).__name__}: {exc}"}
    finally:
        if logdir != os.environ.get(KEEP_ENV):
            shutil.rmtree(logdir, ignore_errors=True)


def _private_folder() -> str:
    """The folder tflaunch made for this run's trace when it is one of ours (a folder, this
    user's, not a link, open to no one else); else a fresh one in the temporary folder."""
    given = os.environ.get(LOG_FOLDER_ENV, "")
    if given:
        info = os.lstat(given)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077:
            return given
    return tempfile.mkdtemp(prefix="tflaunch-anatomy-")


def _read_own_trace(logdir: str, stopping: float) -> Any:
    """The bytes of the trace this profiler wrote at its stop, or why there are none: the
    run folder named by the stop's time (never the name-sorted last of whatever is there:
    a program can write files too), this host's file in it, a regular file, capped."""
    profile = os.path.join(logdir, "plugins", "profile")
    runs = set(time.strftime(TRACE_RUN_FORMAT, time.localtime(t)) for t in range(int(stopping) - 1,
                                                                                   int(time.time()) + 2))
    found = [r for r in (os.listdir(profile) if os.path.isdir(profile) else []) if r in runs]
    if len(found) != 1:
        return "the profiler wrote no trace" if not found else f"{len(found)} traces at its stop: none is read"
    path = os.path.join(profile, found[0], socket.gethostname() + ".xplane.pb")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return f"the profiler's trace {path} cannot be opened ({exc.strerror or exc})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"the trace {path} is not a regular file; it is not read"
        if info.st_size > MOST_TRACE_BYTES:
            return (f"the trace is {info.st_size} bytes, more than the {MOST_TRACE_BYTES} tflaunch reads: "
                    "profile a shorter window (a smaller first step)")
        chunks, size = [], 0
        while size <= MOST_TRACE_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MOST_TRACE_BYTES:
            return f"the trace grew past {MOST_TRACE_BYTES} bytes while it was read; it is not read"
        return b"".join(chunks)
    finally:
        os.close(fd)


def _name_ours(tf: Any) -> None:
    """While ours records, a program's own tf.profiler.experimental.start is told whose
    profiler is running (TensorFlow's words, "Another profiler is running", name nobody)."""
    experimental = tf.profiler.experimental
    original = experimental.start

    @functools.wraps(original)
    def start(*args: Any, **kwargs: Any) -> Any:
        if _LOGDIR is not None:
            raise tf.errors.AlreadyExistsError(None, None, OURS_RUNNING)
        return original(*args, **kwargs)

    start._tflaunch_original = original  # type: ignore[attr-defined]
    for module in _holders(tf, original):
        module.start = start


def _unname_ours(tf: Any) -> None:
    wrapped = tf.profiler.experimental.start
    original = getattr(wrapped, "_tflaunch_original", None)
    if original is not None:
        for module in _holders(tf, original, wrapped):
            module.start = original


def _holders(tf: Any, *starts: Any) -> List[Any]:
    """The API module and the module that defines start (its Profile context calls it there)."""
    found = [tf.profiler.experimental, sys.modules.get(getattr(starts[0], "__module__", ""), None)]
    return [m for m in found if m is not None and getattr(m, "start", None) in starts]


# -- the program observer's two calls (from probe/observer/observe_install.py) -----------------
def after_import(obs: Any) -> None:
    """`import tensorflow` has finished in a program measured with anatomy: start recording."""
    if getattr(obs, "anatomy", False) and _LOGDIR is None and "tensorflow" in sys.modules:
        start(sys.modules["tensorflow"])  # a failure is said by at_ready_point's event


_READY = {"first_step": "first_step", "first_inference": "first"}  # --until's point -> its phase


def at_ready_point(obs: Any, phase: str, window_start: float, window_end: float) -> None:
    """The first step (or first inference) has ended: its anatomy, once, on the channel."""
    if not getattr(obs, "anatomy", False) or _READY.get(getattr(obs, "until", ""), phase) != phase:
        return  # a first inference before the first step that --until names is not the window
    obs.anatomy = False
    obs.send("anatomy", phase, **finish(sys.modules.get("tensorflow"), window_start, window_end))


def _xplane_pb2() -> Any:
    """The XPlane protobuf module TensorFlow ships (tsl's; its own package in newer wheels)."""
    for name in ("tensorflow.tsl.profiler.protobuf.xplane_pb2", "tsl.profiler.protobuf.xplane_pb2"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError("TensorFlow ships no xplane_pb2 here")


# -- the trace, read ---------------------------------------------------------------------------
def _stats(plane: Any, event: Any) -> Dict[str, Any]:
    return {plane.stat_metadata[s.metadata_id].name: s for s in event.stats}


def _profile_start_ns(space: Any) -> Optional[int]:
    """When the profiler started, in ns since the epoch: TensorFlow (2.1x and later)
    subtracts it from every line's timestamp_ns and keeps it on the Task Environment plane."""
    for plane in space.planes:
        if plane.name == "Task Environment":
            for stat in plane.stats:
                if plane.stat_metadata[stat.metadata_id].name == "profile_start_time":
                    return int(stat.uint64_value or stat.int64_value)
    return None


def _marker_base(plane: Any, line: Any, marker_at: Optional[float]) -> Optional[int]:
    """The trace's start in ns since the epoch, from the marker event made at `marker_at`
    (TensorFlow 2.15 and older keep relative times and no profile_start_time)."""
    if marker_at is None:
        return None
    marker_ids = {k for k, m in plane.event_metadata.items() if m.name == MARKER}
    offsets = [e.offset_ps for e in line.events if e.metadata_id in marker_ids]
    return int(marker_at * 1e9) - (line.timestamp_ns + max(offsets) // 1000) if offsets else None


def _window_thread(space: Any) -> Optional[Tuple[Any, Any]]:
    """(plane, line) of the thread that made the marker: the window's own thread."""
    for plane in space.planes:
        if not plane.name.startswith("/host:"):
            continue
        marker_ids = {k for k, m in plane.event_metadata.items() if m.name == MARKER}
        for line in plane.lines:
            if any(e.metadata_id in marker_ids for e in line.events):
                return plane, line
    return None


def _events(space: Any, thread_id: int, base_ns: int,
            others: bool = False) -> List[Tuple[int, int, str, Dict[str, Any]]]:
    """(start, end in ns since the epoch, name, stats) of every event of the thread (or, with
    `others`, of every other thread), on every host plane (CUPTI's driver calls are on a
    plane of their own, a line per thread)."""
    out = []
    for plane in space.planes:
        if not plane.name.startswith("/host:"):
            continue
        for line in plane.lines:
            if (line.id != thread_id) != others:
                continue
            # An event's time is its line's timestamp_ns plus its own offset_ps, both
            # relative to the profile's start (base_ns) once TensorFlow has normalised them.
            origin = base_ns + line.timestamp_ns
            for e in line.events:
                name = plane.event_metadata[e.metadata_id].name
                if name == MARKER:
                    continue
                begin = origin + e.offset_ps // 1000
                out.append((begin, begin + e.duration_ps // 1000, name, _stats(plane, e)))
    out.sort(key=lambda ev: (ev[0], -ev[1]))
    return out


def _side_work(space: Any, thread_id: int, base_ns: int) -> List[Tuple[int, int, str, str]]:
    """(start, end, part, name) of the other threads' one-time work (SIDE_PARTS), merged into
    spans that do not overlap (where two overlap, the earlier one's part keeps the union)."""
    spans: List[Tuple[int, int, str, str]] = []
    for begin, end, name, stats in _events(space, thread_id, base_ns, others=True):
        part = part_of(name, stats)
        if part not in SIDE_PARTS:
            continue
        if spans and begin < spans[-1][1]:
            last = spans[-1]
            spans[-1] = (last[0], max(last[1], end), last[2], last[3])
        else:
            spans.append((begin, end, str(part), name))
    return spans


def attribute(space: Any, window_start: float, window_end: float,
              marker_at: Optional[float] = None) -> Dict[str, Any]:
    """The window [window_start, window_end] (seconds since the epoch, the child's
    time.time()) cut into parts by the innermost event of the window's thread at each instant.
    `marker_at`: when the marker event began, by the same clock (for a trace with no start time)."""
    window_ns = (int(window_start * 1e9), int(window_end * 1e9))
    window = max(0, window_ns[1] - window_ns[0]) / 1e9
    found = _window_thread(space)
    if found is None:
        return {"window": window, "error": "the trace has no event on the window's thread"}
    plane, line = found
    base = _profile_start_ns(space)
    if base is None:
        # Older TensorFlow kept absolute timestamps; a small one with no start time is
        # relative to nothing this process knows.
        base = 0 if line.timestamp_ns >= 10 ** 17 else _marker_base(plane, line, marker_at)
        if base is None:
            return {"window": window, "error": "the trace has no time base (profile_start_time)"}
    seconds: Dict[str, float] = {}
    names: Dict[str, Dict[str, float]] = {}

    def give(part: str, name: str, ns: int) -> None:
        if ns != 0:
            seconds[part] = seconds.get(part, 0.0) + ns / 1e9
            by_name = names.setdefault(part, {})
            by_name[name] = by_name.get(name, 0.0) + ns / 1e9

    # A sweep over the nested events: `open_` holds (end, part, name) of the enclosing ones.
    # Each event's exclusive time is the part of its span, clipped to the window, that no
    # child covers; a wrapper's (part None) goes to its nearest enclosing owner.
    low, high = window_ns
    open_: List[Tuple[int, str, str]] = []
    cursor = low

    side = _side_work(space, line.id, base)

    def advance(to: int) -> None:
        nonlocal cursor
        to = min(max(to, low), high)
        if to > cursor:
            if open_:
                end, part, name = open_[-1]
                if part == "execution" and _WAITS.match(name):
                    for s_begin, s_end, s_part, s_name in side:  # what the wait waited for
                        overlap = min(to, s_end) - max(cursor, s_begin)
                        if overlap > 0:
                            give(s_part, s_name, overlap)
                            give(part, name, -overlap)
                give(part, name, to - cursor)
            cursor = to

    for begin, end, name, stats in _events(space, line.id, base):
        while open_ and open_[-1][0] <= begin:
            advance(open_[-1][0])
            open_.pop()
        advance(begin)
        part = part_of(name, stats)
        if part is None:
            part, name = (open_[-1][1], open_[-1][2]) if open_ else ("execution", name)
        elif part == _UNKNOWN:
            part = NOT_ATTRIBUTED
        elif part == "execution" and open_ and open_[-1][1] in _OWN_KERNELS:
            part, name = open_[-1][1], open_[-1][2]  # an iterator's or a variable's kernel: its own part
        if open_ and end > open_[-1][0]:
            end = open_[-1][0]  # a child never outlives its parent (clock rounding)
        open_.append((end, part, name))
    while open_:
        advance(open_[-1][0])
        open_.pop()
    covered = sum(v for k, v in seconds.items() if k != NOT_ATTRIBUTED)
    parts = [{"part": p, "seconds": seconds[p],
              "names": [{"name": n[:200], "seconds": s}
                        for n, s in sorted(names[p].items(), key=lambda kv: -kv[1])[:NAMES_PER_PART]]}
             for p in PARTS if seconds.get(p, 0.0) > 0]
    unnamed = sorted(names.get(NOT_ATTRIBUTED, {}).items(), key=lambda kv: -kv[1])[:NAMES_PER_PART]
    return {"window": window, "parts": parts, "not_attributed": max(0.0, window - covered),
            "unattributed_names": [{"name": n[:200], "seconds": s} for n, s in unnamed],
            "thread": line.name[:100]}
