"""The environment variables a shared profile may set without asking: an allow-list.

A variable is on this list only when no value it accepts can make a process run code it
would not run otherwise: it names no file, folder, library, module, plugin or command, and
it does not choose which installed code is loaded. Each entry says what it tunes and the
values it takes; a value outside them (a path where a number belongs) needs a yes like any
unlisted variable. The list is short on purpose: a deny-list of dangerous names was tried
and leaked (OPENSSL_CONF loads a provider library at `import hashlib`, PYTHONPLATLIBDIR
plants a standard library, TF_PLUGGABLE_DEVICE_LIBRARY_PATH loads a library at `import
tensorflow`), and no list of bad names is ever complete. A variable missing here costs
a user one acceptance; a variable wrongly here would run a stranger's code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    values: str  # a regular expression every accepted value matches whole (ASCII only)
    tunes: str  # what it changes, for the settings table and the trust dialog
    most: int | None = None  # the largest number the value may hold, where the variable has a range


# ASCII digits only: \d also takes Unicode digits ("٣"), which Python and TensorFlow refuse at
# start with advice that blames the wrong thing. Counts also have a range (Tuning.most).
_NUMBER = r"[0-9]{1,7}"
_THREADS = 1024  # as config.MAX_THREADS: more is a typo, and the library would try to start them all
_SWITCH = r"0|1|true|false|TRUE|FALSE|True|False"
_FLAG = r"[A-Za-z0-9]{0,16}"  # Python's "set to any non-empty string" switches

TUNING_VARIABLES: dict[str, Tuning] = {
    # TensorFlow
    "TF_NUM_INTRAOP_THREADS": Tuning(_NUMBER, "threads inside one TensorFlow op", _THREADS),
    "TF_NUM_INTEROP_THREADS": Tuning(_NUMBER, "TensorFlow ops run in parallel", _THREADS),
    "TF_GPU_THREAD_MODE": Tuning(r"global|gpu_private|gpu_shared", "which threads launch GPU kernels"),
    "TF_GPU_THREAD_COUNT": Tuning(_NUMBER, "threads per GPU in gpu_private mode", _THREADS),
    "TF_DETERMINISTIC_OPS": Tuning(_SWITCH, "deterministic TensorFlow kernels"),
    "TF_CUDNN_DETERMINISTIC": Tuning(_SWITCH, "deterministic cuDNN algorithms"),
    "TF_FORCE_UNIFIED_MEMORY": Tuning(_SWITCH, "GPU memory backed by host memory"),
    "TF_GPU_HOST_MEM_LIMIT_IN_MB": Tuning(_NUMBER, "pinned host memory TensorFlow may use, in MiB"),
    "TF_CPP_MAX_VLOG_LEVEL": Tuning(_NUMBER, "how much of TensorFlow's C++ debug log is written", 10),
    "TF_CPP_VMODULE": Tuning(r"[A-Za-z0-9_]+=[0-9]{1,2}(,[A-Za-z0-9_]+=[0-9]{1,2})*",
                             "TensorFlow's C++ debug log per source file"),
    # CUDA and NCCL
    "CUDA_DEVICE_ORDER": Tuning(r"FASTEST_FIRST|PCI_BUS_ID", "how CUDA numbers the GPUs"),
    "CUDA_LAUNCH_BLOCKING": Tuning(r"0|1", "kernel launches wait for the kernel (debugging)"),
    "CUDA_DEVICE_MAX_CONNECTIONS": Tuning(_NUMBER, "hardware work queues per GPU", 32),
    "CUDA_CACHE_DISABLE": Tuning(r"0|1", "whether the driver keeps the kernels it compiles"),
    "NCCL_DEBUG": Tuning(r"VERSION|WARN|INFO|TRACE", "how much NCCL logs"),
    "NCCL_P2P_DISABLE": Tuning(r"0|1", "NCCL's peer-to-peer transport between GPUs"),
    "NCCL_SHM_DISABLE": Tuning(r"0|1", "NCCL's shared-memory transport"),
    "NCCL_IB_DISABLE": Tuning(r"0|1", "NCCL's InfiniBand transport"),
    # OpenMP, oneDNN's and BLAS's threads
    "OMP_NUM_THREADS": Tuning(r"[0-9]{1,7}(,[0-9]{1,7})*", "OpenMP threads per level", _THREADS),
    "OMP_PROC_BIND": Tuning(r"(true|false|close|spread|master|primary)(,(close|spread|master|primary))*",
                            "whether OpenMP threads stay on their cores"),
    "OMP_PLACES": Tuning(r"threads|cores|sockets|ll_caches|numa_domains|[0-9{}:,]{1,200}",
                         "the cores OpenMP threads run on"),
    "OMP_WAIT_POLICY": Tuning(r"active|passive|ACTIVE|PASSIVE", "whether idle OpenMP threads spin"),
    "OMP_DYNAMIC": Tuning(_SWITCH, "whether OpenMP may use fewer threads"),
    "OMP_MAX_ACTIVE_LEVELS": Tuning(_NUMBER, "nested OpenMP parallel levels", _THREADS),
    "KMP_BLOCKTIME": Tuning(r"[0-9]{1,7}|infinite", "how long an idle Intel OpenMP thread spins, in ms"),
    "KMP_AFFINITY": Tuning(r"[A-Za-z0-9_,=.:\[\]-]{1,200}", "which cores Intel OpenMP threads run on"),
    "KMP_SETTINGS": Tuning(_SWITCH, "Intel OpenMP prints its settings at start"),
    "MKL_NUM_THREADS": Tuning(_NUMBER, "threads of Intel MKL", _THREADS),
    "OPENBLAS_NUM_THREADS": Tuning(_NUMBER, "threads of OpenBLAS", _THREADS),
    # The C library's allocator
    "MALLOC_ARENA_MAX": Tuning(_NUMBER, "glibc malloc arenas (memory per thread)", _THREADS),
    "MALLOC_TRIM_THRESHOLD_": Tuning(_NUMBER, "free memory glibc keeps before returning it, in bytes"),
    "MALLOC_MMAP_THRESHOLD_": Tuning(_NUMBER, "allocations glibc serves with mmap, from this size in bytes"),
    "MALLOC_TOP_PAD_": Tuning(_NUMBER, "extra memory glibc asks for at a time, in bytes"),
    # Python's own switches (no file, module or path among them)
    "PYTHONUNBUFFERED": Tuning(_FLAG, "unbuffered stdout and stderr"),
    "PYTHONDONTWRITEBYTECODE": Tuning(_FLAG, "no .pyc files written"),
    "PYTHONFAULTHANDLER": Tuning(_FLAG, "a traceback on a crash (SIGSEGV, SIGABRT)"),
    "PYTHONHASHSEED": Tuning(r"random|[0-9]{1,10}", "the seed of str hashes", 4294967295),
    "PYTHONUTF8": Tuning(r"0|1", "UTF-8 mode"),
    "PYTHONNOUSERSITE": Tuning(_FLAG, "the user's site folder is not used (less code runs)"),
    "PYTHONMALLOC": Tuning(r"default|malloc|pymalloc|debug|malloc_debug|pymalloc_debug|mimalloc",
                           "Python's memory allocator"),
}

# Variables known to run code, with how: only to explain a refusal better than "unlisted".
# Not a deny-list: everything missing from TUNING_VARIABLES needs a yes whether or not it is here.
KNOWN_CODE: dict[str, str] = {
    "LD_PRELOAD": "loads these libraries into every program started",
    "LD_AUDIT": "loads these libraries into every program started",
    "LD_LIBRARY_PATH": "chooses the folders native libraries (TensorFlow's, CUDA's) are loaded from",
    "PATH": "chooses which programs run when a command is named (python, nvidia-smi, ...)",
    "PYTHONPATH": "puts these folders first on Python's path: a sitecustomize.py or any module there runs",
    "PYTHONHOME": "replaces Python's standard library with the one in this folder",
    "PYTHONPLATLIBDIR": "chooses the folder Python's standard library and its .pth files are read from",
    "PYTHONSTARTUP": "runs this file when Python starts interactively",
    "PYTHONUSERBASE": "chooses the user site folder, whose .pth files and usercustomize run at start",
    "PYTHONPYCACHEPREFIX": "chooses the folder compiled Python files are read from",
    "PYTHONBREAKPOINT": "names a function that runs at every breakpoint()",
    "PYTHONWARNINGS": "imports the modules its warning filters name",
    "OPENSSL_CONF": "a configuration file that loads OpenSSL providers (libraries) at `import hashlib`",
    "OPENSSL_MODULES": "the folder OpenSSL loads provider libraries from",
    "TF_PLUGGABLE_DEVICE_LIBRARY_PATH": "loads this library at `import tensorflow`",
    "TF_XLA_FLAGS": "XLA's options, among them folders compiled programs are loaded from",
    "XLA_FLAGS": "XLA's options, among them the folder ptxas and libdevice are run from",
    "CUDA_INJECTION64_PATH": "loads this library into every CUDA program",
    "NCCL_NET_PLUGIN": "loads this network plugin library into NCCL",
    "OMP_TOOL_LIBRARIES": "loads these tool libraries into every OpenMP program",
    "BASH_ENV": "runs this file before every bash script",
    "ENV": "runs this file when sh starts",
    "GCONV_PATH": "loads character-set converters (native code) from these folders",
    "NODE_OPTIONS": "adds options (such as --require) to every node program",
    "PERL5OPT": "adds options (such as -M) to every perl program",
    "PERL5LIB": "puts these folders first on perl's path",
    "RUBYOPT": "adds options (such as -r) to every ruby program",
    "JAVA_TOOL_OPTIONS": "adds options (such as -javaagent) to every JVM",
}


def is_tuning(name: str, value: str) -> bool:
    """Whether NAME=VALUE is known only to tune: on the list, with a value it takes."""
    tuning = TUNING_VARIABLES.get(name)
    if tuning is None or re.fullmatch(tuning.values, value, re.ASCII) is None:
        return False
    return tuning.most is None or all(int(n) <= tuning.most for n in re.findall(r"[0-9]+", value))


def why_it_needs_a_yes(name: str, value: str) -> str:
    """Why NAME=VALUE needs its user's acceptance, in words (for a variable not is_tuning)."""
    if name in KNOWN_CODE:
        return KNOWN_CODE[name]
    if name.startswith(("LD_", "DYLD_")):
        return "a dynamic-loader variable: it chooses native code"
    if name in TUNING_VARIABLES:
        tuning = TUNING_VARIABLES[name]
        limit = f", at most {tuning.most}" if tuning.most is not None else ""
        return f"not a value {name} is known to take harmlessly ({tuning.tunes}{limit})"
    return "not on the list of variables known only to tune; a variable can make a program load code"
