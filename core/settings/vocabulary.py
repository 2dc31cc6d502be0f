"""Every setting of a run, declared once: its label, its help, and how it reaches TensorFlow.

The CLI's help, the app's form (labels, tooltips, which editor) and a profile's
statement of what its launch applies are all read from SETTINGS, so a setting cannot
mean one thing in one place and another elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..probe.input_shapes import DEFAULTS_HELP
from ..probe.samples import SAMPLES

SAMPLE_MODELS: dict[str, str] = dict(SAMPLES)

LOG_LEVELS: dict[int, str] = {
    0: "all messages",
    1: "hide INFO",
    2: "hide INFO and WARNING",
    3: "errors hidden too",
}

AUTO_JIT_FLAGS = ("--tf_xla_auto_jit=2", "--tf_xla_cpu_global_jit")

# The values of the GPU settings that take a word, each with what it means.
ALLOCATORS: dict[str, str] = {"bfc": "TensorFlow's BFC allocator", "cuda_malloc_async": "CUDA's async allocator"}
MODULE_LOADING: dict[str, str] = {"lazy": "LAZY", "eager": "EAGER"}
# Grappler, TensorFlow's graph optimiser, as tf.config.optimizer.set_experimental_options
# sets it (probe/tf_setup.GRAPPLER_OPTIONS holds the options each word sets).
GRAPPLER: dict[str, str] = {
    "light": "the optimizers that cost most at a first call off (constant folding, arithmetic, remapping, layout, "
             "loop and dependency optimisation)",
    "off": "no graph optimisation at all (disable_meta_optimizer)",
}
CACHE_STATES: dict[str, str] = {"cold": "an empty folder per run", "warm": "kept between runs"}
PAGE_CACHE_STATES: dict[str, str] = {
    "warm": "as the files are (nothing done)",
    "cold": "the model's files and TensorFlow's installation evicted before the start",
    "preloaded": "evicted, then the model's files read back in (TensorFlow stays cold)",
}


def parse_switch(text: str) -> bool:
    """on or off as a user types it (on/true/1/yes, off/false/0/no); ValueError otherwise."""
    if text.lower() in ("on", "true", "1", "yes"):
        return True
    if text.lower() in ("off", "false", "0", "no"):
        return False
    raise ValueError("use on or off")


def parse_tristate(text: str) -> bool | None:
    """default (TensorFlow's own choice), on or off."""
    return None if text.lower() == "default" else parse_switch(text)


class Reach(str, Enum):
    """How a setting gets to TensorFlow, which decides whether a launch can apply it."""

    ENVIRONMENT = "environment"  # a variable set before exec: every program sees it
    TF_CONFIG = "tf.config"  # a call right after `import tensorflow`: the launch hook makes it
    MEASUREMENT = "measurement"  # how tflaunch measures (model, inputs): not part of a launch
    LAUNCHER = "launcher"  # which interpreter starts, and when to give up


@dataclass(frozen=True)
class Setting:
    name: str  # the LaunchConfig field
    label: str
    help: str
    reach: Reach
    group: str  # where the form shows it
    cli: str  # the command-line flag


SETTINGS: tuple[Setting, ...] = (
    Setting("model", "Model", "A SavedModel folder, a .keras or .h5 file, FILE.py:FUNCTION (a function of "
            "yours that builds the model: it runs that code), or a built-in sample built from code (sample:"
            + "|".join(SAMPLE_MODELS) + ").", Reach.MEASUREMENT, "Subject", "--model"),
    Setting("program", "Program", "Your own command line (python train.py ...) as the subject instead of a model: "
            "the launch hook observes its phases (import, build or load, compile, data, first step, first "
            "inference, steady) on a private channel; its output is untouched.", Reach.MEASUREMENT, "Subject",
            "-- COMMAND"),
    Setting("workdir", "Working folder", "The folder a program starts in (its relative paths are read from "
            "there); empty: tflaunch's own.", Reach.MEASUREMENT, "Subject", "--cwd"),
    Setting("until", "Until", "Where a program's run is measured to: first_step, first_inference, mark:NAME (a "
            "tflaunch_mark.mark of its own) or exit. tflaunch then ends the program (its whole process group) "
            "after --steady more steps or calls and records it as stopped at ready, not as a failure.",
            Reach.MEASUREMENT, "Subject", "--until"),
    Setting("python", "Interpreter", "The python that runs the child: any environment with TensorFlow "
            "(venv, conda...); tflaunch need not be installed there.", Reach.LAUNCHER, "Python environment",
            "--python"),
    Setting("visible_gpus", "Visible GPUs", "GPUs TensorFlow may see: CUDA_VISIBLE_DEVICES, set before the "
            "child starts.", Reach.ENVIRONMENT, "GPUs", "--gpus"),
    Setting("memory_growth", "Memory growth", "Allocate GPU memory as needed instead of all at start: "
            "TF_FORCE_GPU_ALLOW_GROWTH=true before start, and tf.config.experimental.set_memory_growth().",
            Reach.ENVIRONMENT, "GPUs", "--memory-growth"),
    Setting("memory_limit_mb", "Memory limit", "Per-GPU memory limit in MiB: tf.config.set_logical_device_"
            "configuration(gpu, [LogicalDeviceConfiguration(memory_limit=MiB)]).", Reach.TF_CONFIG, "GPUs",
            "--memory-limit"),
    Setting("allocator", "GPU allocator", "TensorFlow's GPU memory allocator: cuda_malloc_async sets "
            "TF_GPU_ALLOCATOR=cuda_malloc_async before start (CUDA's stream-ordered allocator, which hands freed "
            "memory back, so more processes fit on one card); bfc removes the variable (TensorFlow's own BFC "
            "allocator); default leaves the environment's.", Reach.ENVIRONMENT, "GPUs", "--allocator"),
    Setting("cudnn_autotune", "cuDNN autotuning", "TF_CUDNN_USE_AUTOTUNE=1 or 0 before start. Off skips timing "
            "cuDNN's algorithms in the first calls: a faster first call, perhaps a slower steady state; default "
            "leaves TensorFlow's (on).", Reach.ENVIRONMENT, "GPUs", "--cudnn-autotune"),
    Setting("module_loading", "CUDA module loading", "CUDA_MODULE_LOADING=LAZY or EAGER before start. Lazy "
            "(CUDA's default since 12.2) loads each kernel when first used, which moves that time into the first "
            "call; eager loads them all when the context is created; default leaves the driver's.",
            Reach.ENVIRONMENT, "GPUs", "--module-loading"),
    Setting("cuda_cache", "CUDA kernel cache", "Where the driver keeps the kernels it JIT-compiles from PTX (a "
            "card TensorFlow has no native kernels for): CUDA_CACHE_PATH, with CUDA_CACHE_MAXSIZE=4 GiB, before "
            "start. cold: an empty folder for each run, what a first start on a new machine costs; warm: a folder "
            "tflaunch keeps for this interpreter, TensorFlow, driver and GPUs, emptied when one of them changes; "
            "default leaves the driver's own (~/.nv/ComputeCache).", Reach.ENVIRONMENT, "GPUs", "--cuda-cache"),
    Setting("xla_cache", "XLA program cache", "Keep the programs XLA compiles across runs: TF_XLA_FLAGS="
            "--tf_xla_persistent_cache_directory=FOLDER before start, with a folder tflaunch keeps for this "
            "interpreter, TensorFlow, driver and GPUs; checked against the installed TensorFlow first. It acts on "
            "XLA-compiled code only (XLA auto-clustering, jit_compile).", Reach.ENVIRONMENT, "TensorFlow",
            "--xla-cache"),
    Setting("page_cache", "Page cache", "What the kernel's page cache holds at the start. warm: nothing is done "
            "(the files are as earlier runs left them, usually in memory); cold: before the start tflaunch evicts "
            "the model's files and the interpreter's TensorFlow and Keras installation (posix_fadvise, no root), "
            "as after a reboot, and says how much really left memory; preloaded: cold, then the model's files "
            "read back in (what vmtouch -t in a deploy script does). Linux only; a launch of your own script "
            "(tflaunch run) leaves the page cache as it is.", Reach.MEASUREMENT, "TensorFlow",
            "--page-cache"),
    Setting("nvtx", "NVTX ranges (measurement only)", "Mark each phase as an NVTX range (tflaunch:import, "
            "tflaunch:devices, ...) so a run under Nsight Systems (nsys profile) shows tflaunch's phases. Needs "
            "libnvToolsExt in the child's environment (the nvidia-nvtx-cu12 wheel or a CUDA toolkit); the run "
            "says when it is missing.", Reach.MEASUREMENT, "GPUs", "--nvtx"),
    Setting("grappler", "Graph optimiser", "How much TensorFlow optimises each function's graph "
            "before its first run: tf.config.optimizer.set_experimental_options() right after import (the launch "
            "hook makes the call in your program). light: " + GRAPPLER["light"] + "; off: " + GRAPPLER["off"]
            + ". Either can cut instantiation at the first step and slow every later one; default leaves "
            "TensorFlow's.", Reach.TF_CONFIG, "TensorFlow", "--grappler"),
    Setting("intra", "Intra-op threads", "Threads inside one op: tf.config.threading."
            "set_intra_op_parallelism_threads(); 0 leaves TensorFlow's default (all cores).", Reach.TF_CONFIG,
            "TensorFlow", "--intra"),
    Setting("inter", "Inter-op threads", "Ops run in parallel: tf.config.threading."
            "set_inter_op_parallelism_threads(); 0 leaves TensorFlow's default.", Reach.TF_CONFIG, "TensorFlow",
            "--inter"),
    Setting("xla_auto", "XLA auto-clustering", "Let TensorFlow compile clusters of ops with XLA in any "
            "program: TF_XLA_FLAGS=" + " ".join(AUTO_JIT_FLAGS) + " before start (the second flag is what "
            "makes it act on CPU); checked against the installed TensorFlow first.", Reach.ENVIRONMENT,
            "TensorFlow", "--xla-auto"),
    Setting("jit_compile", "Compile the model with XLA (measurement only)", "tflaunch wraps the model's "
            "forward pass in tf.function(jit_compile=True). A launch cannot do this to your script: to get it, "
            "call your model through tf.function(model, jit_compile=True) or model.compile(jit_compile=True).",
            Reach.MEASUREMENT, "TensorFlow", "--jit-compile"),
    Setting("onednn", "oneDNN", "oneDNN CPU optimisations: TF_ENABLE_ONEDNN_OPTS=1 or 0 before start; "
            "default leaves TensorFlow's choice.", Reach.ENVIRONMENT, "TensorFlow", "--onednn"),
    Setting("log_level", "Log level", "TensorFlow's C++ log filter: TF_CPP_MIN_LOG_LEVEL before start.",
            Reach.ENVIRONMENT, "TensorFlow", "--log-level"),
    Setting("extra_env", "Extra environment", "More variables for the child, NAME=VALUE, one per line: set "
            "before it starts, so even what Python or a library reads at start-up (PYTHONPATH, LD_PRELOAD, "
            "MALLOC_*) takes effect.", Reach.ENVIRONMENT, "Environment", "--env"),
    Setting("batch", "Batch size", "Batch size of the inputs generated from the model's signature.",
            Reach.MEASUREMENT, "Inference", "--batch"),
    Setting("inputs", "Input shapes", "The shape of each model input without the batch dimension, "
            "NAME=D1xD2...[:DTYPE] (for example image=320x320x3 or tokens=256). An unknown dimension left "
            "unset gets a default (" + DEFAULTS_HELP + ") and the result says the shape was assumed.",
            Reach.MEASUREMENT, "Inference", "--input"),
    Setting("signature", "Signature", "The SavedModel signature to call; by default serving_default, or the "
            "only one there is.", Reach.MEASUREMENT, "Subject", "--signature"),
    Setting("imports", "Imports (run code)", "Modules or .py files imported in the child before the model "
            "loads, so the custom layers they register can be found. This runs their code.",
            Reach.MEASUREMENT, "Subject", "--import"),
    Setting("unsafe_deserialization", "Unsafe deserialization (run code)", "Turn off Keras's safe mode, so "
            "Lambda layers load: they run Python code stored in the model file. Only for files you trust.",
            Reach.MEASUREMENT, "Subject", "--unsafe-deserialization"),
    Setting("steady", "Steady runs", "Inferences after the first (a program's steps or calls after its ready "
            "point), to measure steady-state latency.", Reach.MEASUREMENT, "Inference", "--steady"),
    Setting("call", "Call", "How the probe calls the model, as your code would: function (a traced "
            "tf.function's concrete function, the default: a `trace` phase, then calls), eager (model(x) as "
            "written, no trace phase) or predict (model.predict / the signature through predict_on_batch). Every "
            "result says which.", Reach.MEASUREMENT, "Inference", "--call"),
    Setting("timeout", "Timeout", "A run still going after this many seconds is stopped and marked timed out.",
            Reach.LAUNCHER, "Inference", "--timeout"),
)

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}


# What a measurement was made on, not how: shown with the evidence, never "not applied".
MEASUREMENT_SETUP = ("model", "batch", "steady", "inputs", "signature", "call", "program", "workdir", "until")
CALLS: dict[str, str] = {"function": "a traced concrete function", "eager": "model(x), eager",
                         "predict": "model.predict_on_batch"}
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
