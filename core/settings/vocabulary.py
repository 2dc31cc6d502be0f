"""Every setting of a run, declared once: its label, its help, how it reaches TensorFlow,
its kind of value, its choices, its default and the words for its values.

The CLI's flags, the app's form (labels, tooltips, editors), the sweep's axes, the launch
checks, the display text and a profile's statement of what its launch applies are all
made from SETTINGS, so a setting cannot mean one thing in one place and another elsewhere.
"""

from __future__ import annotations

import sys

from ..probe.model.input_shapes import DEFAULTS_HELP
from ..probe.model.samples import SAMPLES
from ..subject import Subject
from .setting import DEFAULT, Kind, Reach, Setting, parse_switch, parse_tristate

__all__ = ["BY_NAME", "SETTINGS", "Kind", "Reach", "Setting", "parse_switch", "parse_tristate"]

SAMPLE_MODELS: dict[str, str] = dict(SAMPLES)

LOG_LEVELS: dict[int, str] = {
    0: "all messages",
    1: "hide INFO",
    2: "hide INFO and WARNING",
    3: "errors hidden too",
}

AUTO_JIT_FLAGS = ("--tf_xla_auto_jit=2", "--tf_xla_cpu_global_jit")
MAX_THREADS = 1024  # per pool: more is a typo, and TensorFlow would try to start them all

# The values of the settings that take a word, each with the words for it.
ALLOCATORS: dict[str, str] = {"bfc": "TensorFlow's BFC allocator", "cuda_malloc_async": "CUDA's async allocator"}
MODULE_LOADING: dict[str, str] = {"lazy": "LAZY", "eager": "EAGER"}  # the value of CUDA_MODULE_LOADING
# Grappler, TensorFlow's graph optimiser, as tf.config.optimizer.set_experimental_options
# sets it (probe/tf_setup.GRAPPLER_OPTIONS holds the options each word sets).
GRAPPLER: dict[str, str] = {
    "light": "the optimizers that cost most at a first call off (constant folding, arithmetic, remapping, layout, "
             "loop and dependency optimisation)",
    "off": "no graph optimisation at all (disable_meta_optimizer)",
}
CACHE_STATES: dict[str, str] = {"cold": "empty per run", "warm": "kept"}
PAGE_CACHE_STATES: dict[str, str] = {"warm": "as it is", "cold": "evicted first", "preloaded": "model read back in"}
CALLS: dict[str, str] = {"function": "traced, then called", "eager": "model(x) as written",
                         "predict": "predict_on_batch"}
UNTIL_WORDS: dict[str, str] = {"first_step": "its first training step", "first_inference": "its first inference",
                               "exit": "its exit"}
TF_DECIDES = "default (TensorFlow decides)"
# Settings one subject reads (Setting.read_by), each with the reason the other does not.
MODEL_ONLY, PROGRAM_ONLY = frozenset({Subject.MODEL}), frozenset({Subject.PROGRAM})

SETTINGS: tuple[Setting, ...] = (
    Setting("model", "Model", "A SavedModel folder, a .keras or .h5 file, FILE.py:FUNCTION (a function of "
            "yours that builds the model: it runs that code), or a built-in sample built from code (sample:"
            + "|".join(SAMPLE_MODELS) + ").", Reach.MEASUREMENT, "Subject", "--model",
            kind=Kind.TEXT, default="sample:mlp",
            read_by=MODEL_ONLY, unread_because="a program loads or builds its own model"),
    Setting("program", "Program", "Your own command line (python train.py ...) as the subject instead of a model: "
            "the launch hook observes its phases (import, build or load, compile, data, first step, first "
            "inference, steady) on a private channel; its output is untouched.", Reach.MEASUREMENT, "Subject",
            "-- COMMAND",
            kind=Kind.LIST, default=(), unset=("none (a model is the subject)", "none"),
            read_by=PROGRAM_ONLY, unread_because="a model is the subject: no command line runs"),
    Setting("workdir", "Working folder", "The folder a program starts in (its relative paths are read from "
            "there); empty: tflaunch's own.", Reach.MEASUREMENT, "Subject", "--cwd",
            kind=Kind.TEXT, default="", unset=("the current folder", DEFAULT),
            read_by=PROGRAM_ONLY, unread_because="a model's probe starts in tflaunch's own folder"),
    Setting("until", "Until", "Where a program's run is measured to: " + ", ".join(UNTIL_WORDS) + " or "
            "mark:NAME (a tflaunch_mark.mark of its own). tflaunch then ends the program (its whole process group) "
            "after --steady more steps or calls and records it as stopped at ready, not as a failure.",
            Reach.MEASUREMENT, "Subject", "--until",
            kind=Kind.CHOICE, default="first_step", choices=UNTIL_WORDS,
            read_by=PROGRAM_ONLY, unread_because="a model is ready at its first inference"),
    Setting("python", "Interpreter", "The python that runs the child: any environment with TensorFlow "
            "(venv, conda...); tflaunch need not be installed there.", Reach.LAUNCHER, "Python environment",
            "--python",
            kind=Kind.TEXT, default=sys.executable),
    Setting("visible_gpus", "Visible GPUs", "GPUs TensorFlow may see: CUDA_VISIBLE_DEVICES, set before the "
            "child starts.", Reach.ENVIRONMENT, "GPUs", "--gpus",
            kind=Kind.INDICES, unset=("all", "all"), sweep="all"),
    Setting("memory_growth", "Memory growth", "Allocate GPU memory as needed instead of all at start: "
            "TF_FORCE_GPU_ALLOW_GROWTH=true before start, and tf.config.experimental.set_memory_growth().",
            Reach.ENVIRONMENT, "GPUs", "--memory-growth",
            kind=Kind.SWITCH, default=False, sweep="off,on"),
    Setting("memory_limit_mb", "Memory limit", "Per-GPU memory limit in MiB: tf.config.set_logical_device_"
            "configuration(gpu, [LogicalDeviceConfiguration(memory_limit=MiB)]).", Reach.TF_CONFIG, "GPUs",
            "--memory-limit",
            kind=Kind.MIB, unset=("no limit", "none"), unit="MiB", sweep="none,4096"),
    Setting("allocator", "GPU allocator", "TensorFlow's GPU memory allocator: cuda_malloc_async sets "
            "TF_GPU_ALLOCATOR=cuda_malloc_async before start (CUDA's stream-ordered allocator, which hands freed "
            "memory back, so more processes fit on one card); bfc removes the variable (TensorFlow's own BFC "
            "allocator); default leaves the environment's.", Reach.ENVIRONMENT, "GPUs", "--allocator",
            kind=Kind.CHOICE, choices=ALLOCATORS,
            unset=("default (the environment's, else BFC)", DEFAULT), sweep="bfc,cuda_malloc_async"),
    Setting("cudnn_autotune", "cuDNN autotuning", "TF_CUDNN_USE_AUTOTUNE=1 or 0 before start. Off skips timing "
            "cuDNN's algorithms in the first calls: a faster first call, perhaps a slower steady state; default "
            "leaves TensorFlow's (on).", Reach.ENVIRONMENT, "GPUs", "--cudnn-autotune",
            kind=Kind.TRISTATE, unset=(TF_DECIDES, DEFAULT), sweep="on,off"),
    Setting("module_loading", "CUDA module loading", "CUDA_MODULE_LOADING=LAZY or EAGER before start. Lazy "
            "(CUDA's default since 12.2) loads each kernel when first used, which moves that time into the first "
            "call; eager loads them all when the context is created; default leaves the driver's.",
            Reach.ENVIRONMENT, "GPUs", "--module-loading",
            kind=Kind.CHOICE, choices={"lazy": "each kernel when used", "eager": "all at start"},
            unset=("default (the driver's: lazy since CUDA 12.2)", DEFAULT), sweep="lazy,eager"),
    Setting("cuda_cache", "CUDA kernel cache", "Where the driver keeps the kernels it JIT-compiles from PTX (a "
            "card TensorFlow has no native kernels for): CUDA_CACHE_PATH, with CUDA_CACHE_MAXSIZE=4 GiB, before "
            "start. cold: an empty folder for each run, what a first start on a new machine costs; warm: the cache "
            "pack tflaunch keeps for this interpreter, TensorFlow and build, driver and GPUs (a new one when one of "
            "them changes; tflaunch cache lists them); "
            "default leaves the driver's own (~/.nv/ComputeCache).", Reach.ENVIRONMENT, "GPUs", "--cuda-cache",
            kind=Kind.CHOICE, choices=CACHE_STATES,
            unset=("default (the driver's own folder)", DEFAULT), sweep="cold,warm"),
    Setting("xla_cache", "XLA program cache", "Keep the programs XLA compiles across runs: TF_XLA_FLAGS="
            "--tf_xla_persistent_cache_directory=FOLDER before start, in the cache pack tflaunch keeps for this "
            "interpreter, TensorFlow and build, XLA flags, driver and GPUs (on a GPU with XLA's autotune cache); "
            "checked against the installed TensorFlow first; a damaged entry is removed and a full disk reads the "
            "pack without filling it. It acts on XLA-compiled code only (XLA auto-clustering, jit_compile).",
            Reach.ENVIRONMENT, "TensorFlow", "--xla-cache",
            kind=Kind.SWITCH, default=False, sweep="off,on"),
    Setting("page_cache", "Page cache", "What the kernel's page cache holds at the start. warm: nothing is done "
            "(the files are as earlier runs left them, usually in memory); cold: before the start tflaunch evicts "
            "the model's files and the interpreter's TensorFlow and Keras installation (posix_fadvise, no root), "
            "as after a reboot, and says how much really left memory; preloaded: cold, then the model's files "
            "read back in (what vmtouch -t in a deploy script does). Linux only; a launch of your own script "
            "(tflaunch run) leaves the page cache as it is.", Reach.MEASUREMENT, "TensorFlow",
            "--page-cache",
            kind=Kind.CHOICE, default="warm", choices=PAGE_CACHE_STATES, sweep="warm,cold"),
    Setting("nvtx", "NVTX ranges (measurement only)", "Mark each phase as an NVTX range (tflaunch:import, "
            "tflaunch:devices, ...) so a run under Nsight Systems (nsys profile) shows tflaunch's phases. Needs "
            "libnvToolsExt in the child's environment (the nvidia-nvtx-cu12 wheel or a CUDA toolkit); the run "
            "says when it is missing.", Reach.MEASUREMENT, "GPUs", "--nvtx",
            kind=Kind.SWITCH, default=False),
    Setting("grappler", "Graph optimiser", "How much TensorFlow optimises each function's graph "
            "before its first run: tf.config.optimizer.set_experimental_options() right after import (the launch "
            "hook makes the call in your program). light: " + GRAPPLER["light"] + "; off: " + GRAPPLER["off"]
            + ". Either can cut instantiation at the first step and slow every later one; default leaves "
            "TensorFlow's.", Reach.TF_CONFIG, "TensorFlow", "--grappler",
            kind=Kind.CHOICE, choices={"light": "costly optimizers off", "off": "none at all"},
            unset=(TF_DECIDES, DEFAULT)),
    Setting("intra", "Intra-op threads", "Threads inside one op: tf.config.threading."
            "set_intra_op_parallelism_threads(); 0 leaves TensorFlow's default (all cores).", Reach.TF_CONFIG,
            "TensorFlow", "--intra",
            kind=Kind.COUNT, default=0, bounds=(0, MAX_THREADS), unset=(TF_DECIDES, DEFAULT), sweep="1,2"),
    Setting("inter", "Inter-op threads", "Ops run in parallel: tf.config.threading."
            "set_inter_op_parallelism_threads(); 0 leaves TensorFlow's default.", Reach.TF_CONFIG, "TensorFlow",
            "--inter",
            kind=Kind.COUNT, default=0, bounds=(0, MAX_THREADS), unset=(TF_DECIDES, DEFAULT), sweep="1,2"),
    Setting("xla_auto", "XLA auto-clustering", "Let TensorFlow compile clusters of ops with XLA in any "
            "program: TF_XLA_FLAGS=" + " ".join(AUTO_JIT_FLAGS) + " before start (the second flag is what "
            "makes it act on CPU); checked against the installed TensorFlow first.", Reach.ENVIRONMENT,
            "TensorFlow", "--xla-auto",
            kind=Kind.SWITCH, default=False, sweep="off,on"),
    Setting("jit_compile", "Compile the model with XLA (measurement only)", "tflaunch wraps the model's "
            "forward pass in tf.function(jit_compile=True). A launch cannot do this to your script: to get it, "
            "call your model through tf.function(model, jit_compile=True) or model.compile(jit_compile=True).",
            Reach.MEASUREMENT, "TensorFlow", "--jit-compile",
            kind=Kind.SWITCH, default=False, sweep="off,on", read_by=MODEL_ONLY,
            unread_because="a program compiles its own model: model.compile(jit_compile=True) in your code; "
                           "XLA auto-clustering, which a launch applies, is measured instead"),
    Setting("onednn", "oneDNN", "oneDNN CPU optimisations: TF_ENABLE_ONEDNN_OPTS=1 or 0 before start; "
            "default leaves TensorFlow's choice.", Reach.ENVIRONMENT, "TensorFlow", "--onednn",
            kind=Kind.TRISTATE, unset=(TF_DECIDES, DEFAULT), sweep="default,off"),
    Setting("log_level", "Log level", "TensorFlow's C++ log filter: TF_CPP_MIN_LOG_LEVEL before start.",
            Reach.ENVIRONMENT, "TensorFlow", "--log-level",
            kind=Kind.CHOICE, choices=LOG_LEVELS, unset=(TF_DECIDES, DEFAULT)),
    Setting("extra_env", "Extra environment", "More variables for the child, NAME=VALUE, one per line: set "
            "before it starts, so even what Python or a library reads at start-up (PYTHONPATH, LD_PRELOAD, "
            "MALLOC_*) takes effect.", Reach.ENVIRONMENT, "Environment", "--env",
            kind=Kind.PAIRS, default={}, unset=("none", "none")),
    Setting("batch", "Batch size", "Batch size of the inputs generated from the model's signature.",
            Reach.MEASUREMENT, "Inference", "--batch",
            kind=Kind.COUNT, default=1, bounds=(1, 1 << 20), sweep="1,8",
            read_by=MODEL_ONLY, unread_because="a program chooses its own batch"),
    Setting("inputs", "Input shapes", "The shape of each model input without the batch dimension, "
            "NAME=D1xD2...[:DTYPE] (for example image=320x320x3 or tokens=256). An unknown dimension left "
            "unset gets a default (" + DEFAULTS_HELP + ") and the result says the shape was assumed.",
            Reach.MEASUREMENT, "Inference", "--input",
            kind=Kind.PAIRS, default={}, unset=("as the model declares them", DEFAULT),
            read_by=MODEL_ONLY, unread_because="a program makes its own inputs"),
    Setting("signature", "Signature", "The SavedModel signature to call; by default serving_default, or the "
            "only one there is.", Reach.MEASUREMENT, "Subject", "--signature",
            kind=Kind.TEXT, default="", unset=("default (serving_default, or the only one)", DEFAULT),
            read_by=MODEL_ONLY, unread_because="a program calls its own model"),
    Setting("imports", "Imports (run code)", "Modules or .py files imported in the child before the model "
            "loads, so the custom layers they register can be found. This runs their code.",
            Reach.MEASUREMENT, "Subject", "--import",
            kind=Kind.LIST, default=(), unset=("none", "none"),
            read_by=MODEL_ONLY, unread_because="a program imports what it needs itself"),
    Setting("unsafe_deserialization", "Unsafe deserialization (run code)", "Turn off Keras's safe mode, so "
            "Lambda layers load: they run Python code stored in the model file. Only for files you trust.",
            Reach.MEASUREMENT, "Subject", "--unsafe-deserialization",
            kind=Kind.SWITCH, default=False,
            read_by=MODEL_ONLY, unread_because="a program loads its own model"),
    Setting("steady", "Steady runs", "Inferences after the first (a program's steps or calls after its ready "
            "point), to measure steady-state latency.", Reach.MEASUREMENT, "Inference", "--steady",
            kind=Kind.COUNT, default=20, bounds=(0, 1_000_000), unit="calls"),
    Setting("call", "Call", "How the probe calls the model, as your code would: function (a traced "
            "tf.function's concrete function, the default: a `trace` phase, then calls), eager (model(x) as "
            "written, no trace phase) or predict (model.predict / the signature through predict_on_batch). Every "
            "result says which.", Reach.MEASUREMENT, "Inference", "--call",
            kind=Kind.CHOICE, default="function", choices=CALLS,
            read_by=MODEL_ONLY, unread_because="a program calls its own model"),
    Setting("timeout", "Timeout", "A run still going after this many seconds is stopped and marked timed out.",
            Reach.LAUNCHER, "Inference", "--timeout",
            kind=Kind.SECONDS, default=600.0, unit="s"),
)

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}


# What a measurement was made on, not how: shown with the evidence, never "not applied".
MEASUREMENT_SETUP = ("model", "batch", "steady", "inputs", "signature", "call", "program", "workdir", "until")
# Settings that make the child run code from outside tflaunch (besides the model file).
CODE_SETTINGS = ("imports", "unsafe_deserialization", "program")


def launch_statement(names: list[str]) -> dict[str, list[str]]:
    """Of the settings `names` (those a profile changes), which its launch applies and how."""
    out: dict[str, list[str]] = {"environment": [], "tf_config": [], "measurement_only": []}
    for name in names:
        reach = BY_NAME[name].reach
        if reach is Reach.ENVIRONMENT:
            out["environment"].append(name)
        elif reach is Reach.TF_CONFIG:
            out["tf_config"].append(name)
        elif reach is Reach.MEASUREMENT and name not in MEASUREMENT_SETUP:
            out["measurement_only"].append(name)
    return {k: v for k, v in out.items() if v}
