"""tflaunch probe: loads one model in this process, phase by phase, and reports events.

Run by any interpreter that has TensorFlow, even one without tflaunch installed, so only
the standard library is imported at module level. Usage::

    python probe.py '{"model": "sample:mlp", "steady": 20}'
    python probe.py --config run.json
    python probe.py --save-sample wide --format keras --out /tmp/models
    python probe.py --convert model.keras --format h5 --format savedmodel --out /tmp/models

Events are JSON lines on the original stdout (protocol v1, see tflaunch.core.events);
fd 1 is pointed at stderr before anything else so that prints from model code and
TensorFlow's logs cannot corrupt the stream.
"""

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import threading
import time
import traceback

# When run as a script, this file's folder is sys.path[0]; its neighbours (config.py,
# events.py, ...) must not shadow modules that TensorFlow imports.
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

PROTOCOL_VERSION = 1
SAMPLES = ("mlp", "wide", "cnn", "multi")
FORMATS = ("keras", "h5", "savedmodel")
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


class ProbeFailure(Exception):
    """A failure with a stable kind and a message that tells the user what to do."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind, self.message = kind, message


class Channel:
    """The event stream: a private duplicate of the original stdout."""

    def __init__(self):
        sys.stdout.flush()
        self._file = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
        os.dup2(2, 1)

    def emit(self, event, phase, **fields):
        record = {"v": PROTOCOL_VERSION, "ts": time.time(), "phase": phase, "event": event, **fields}
        self._file.write(json.dumps(record, default=str) + "\n")
        self._file.flush()


def process_age():
    """Seconds since the OS started this process, or None where that cannot be read."""
    try:
        with open("/proc/self/stat") as f:
            stat = f.read()
        start_ticks = int(stat[stat.rindex(")") + 2 :].split()[19])
        # /proc/stat's btime has whole-second resolution; CLOCK_BOOTTIME avoids that error.
        return time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import psutil

        return time.time() - psutil.Process().create_time()
    except Exception:
        return None


def memory():
    """(rss, peak_rss) of this process in bytes; None where it cannot be read.

    Linux keeps ru_maxrss across execve, so it would report the peak of whatever forked
    the probe (a GUI holding hundreds of MiB); VmHWM belongs to this address space alone.
    """
    rss = peak = None
    try:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f if line.startswith(("VmRSS", "VmHWM")))
        rss = int(fields["VmRSS"].split()[0]) * 1024
        peak = int(fields["VmHWM"].split()[0]) * 1024
    except (OSError, ValueError, KeyError):
        try:
            import psutil

            info = psutil.Process().memory_info()
            rss, peak = info.rss, getattr(info, "peak_wset", None)
        except Exception:
            pass
    return rss, peak


def exit_with_parent(poll_s=0.5):
    """Leave when the launcher dies (a kill -9 of the app): an orphaned probe serves nobody."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(4)

    threading.Thread(target=watch, name="tflaunch-parent-watch", daemon=True).start()


class Probe:
    def __init__(self, channel, config):
        self.channel = channel
        self.config = config
        self.current = "spawn"

    @contextlib.contextmanager
    def phase(self, name):
        self.current = name
        self.channel.emit("phase_start", name)
        extra = {}
        start = time.perf_counter()
        yield extra
        duration = time.perf_counter() - start
        rss, peak = memory()
        self.channel.emit("phase_end", name, duration=duration, rss=rss, peak_rss=peak, **extra)

    def run(self):
        cfg = self.config
        age = process_age()
        self.channel.emit("hello", "spawn", pid=os.getpid(), process_age=age, python=sys.executable)
        if age is None and cfg.get("launched_at"):
            age = time.time() - float(cfg["launched_at"])
        rss, peak = memory()
        self.channel.emit("phase_end", "spawn", duration=max(age or 0.0, 0.0), rss=rss, peak_rss=peak)

        set_environment(cfg)
        with self.phase("import"):
            tf, keras = import_tensorflow()
        with self.phase("devices"):
            applied = configure_devices(tf, cfg)
        self.channel.emit("settings", "devices", applied=applied)
        with self.phase("load"):
            model = load_model(tf, keras, cfg["model"])
        with self.phase("trace"):
            fn, specs = trace(tf, model, bool(cfg.get("xla")))
        inputs = make_inputs(tf, specs, int(cfg.get("batch", 1)))
        with self.phase("first"):
            infer(tf, fn, inputs)
        with self.phase("steady") as extra:
            extra["latency"] = steady_latency(tf, fn, inputs, int(cfg.get("steady", 20)))
        self.channel.emit("result", "steady", environment=environment(tf, keras),
                          model=describe(model, cfg["model"], specs, inputs))


def set_environment(cfg):
    os.environ.update(tensorflow_environment(cfg))


def tensorflow_environment(cfg):
    """Settings TensorFlow reads from the environment, so they must precede its import.

    `tflaunch run --profile` sets the same variables for a user's own script."""
    env = {}
    if cfg.get("log_level") is not None:
        env["TF_CPP_MIN_LOG_LEVEL"] = str(cfg["log_level"])
    if cfg.get("onednn") is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = "1" if cfg["onednn"] else "0"
    if cfg.get("visible_gpus") is not None:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in cfg["visible_gpus"])
    if cfg.get("memory_growth"):
        env["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"  # TensorFlow accepts exactly "true"
    env.update({str(k): str(v) for k, v in (cfg.get("extra_env") or {}).items()})
    return env


def import_tensorflow():
    try:
        import tensorflow as tf
    except ModuleNotFoundError as exc:
        if exc.name not in ("tensorflow", None):
            raise
        raise ProbeFailure(
            "no_tensorflow",
            f"The interpreter {sys.executable} has no TensorFlow. Install it with: "
            f"{sys.executable} -m pip install tensorflow") from None
    except ImportError as exc:
        raise ProbeFailure(
            "tensorflow_broken",
            f"TensorFlow is installed for {sys.executable} but fails to import ({exc}). "
            "Reinstall it in that environment.") from None
    try:
        import keras
    except ImportError:
        keras = tf.keras
    return tf, keras


def apply_tf_config(tf, cfg):
    """The tf.config part of a configuration. `tflaunch run --profile` applies it to users'
    own scripts through launch_hook/sitecustomize.py, which loads this file for it."""
    if cfg.get("intra"):
        tf.config.threading.set_intra_op_parallelism_threads(int(cfg["intra"]))
    if cfg.get("inter"):
        tf.config.threading.set_inter_op_parallelism_threads(int(cfg["inter"]))
    if cfg.get("xla"):
        tf.config.optimizer.set_jit("autoclustering")
    for gpu in tf.config.list_physical_devices("GPU"):
        if cfg.get("memory_growth"):
            tf.config.experimental.set_memory_growth(gpu, True)
        if cfg.get("memory_limit_mb"):
            limit = tf.config.LogicalDeviceConfiguration(memory_limit=int(cfg["memory_limit_mb"]))
            tf.config.set_logical_device_configuration(gpu, [limit])


def configure_devices(tf, cfg):
    apply_tf_config(tf, cfg)
    gpus = tf.config.list_physical_devices("GPU")
    logical = tf.config.list_logical_devices()
    limits = {g.name: [c.memory_limit for c in tf.config.get_logical_device_configuration(g) or []] for g in gpus}
    return {
        "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
        "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads(),
        "xla_jit": tf.config.optimizer.get_jit() or "off",
        "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
        "log_level": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "default"),
        "visible_gpus": os.environ.get("CUDA_VISIBLE_DEVICES", "all") if gpus else "no GPU",
        "gpus": [g.name for g in gpus],
        "memory_growth": {g.name: tf.config.experimental.get_memory_growth(g) for g in gpus} or "no GPU",
        "memory_limit_mb": limits or "no GPU",
        "extra_env": {k: os.environ.get(k) for k in (cfg.get("extra_env") or {})},
        "logical_devices": [d.name for d in logical],
    }


def build_sample(keras, name):
    if name not in SAMPLES:
        choices = ", ".join(f"sample:{s}" for s in SAMPLES)
        raise ProbeFailure("unknown_sample", f"There is no built-in sample '{name}'. Choose one of: {choices}")
    keras.utils.set_random_seed(0)
    layers = keras.layers
    if name == "mlp":
        inputs = keras.Input((784,), name="pixels")
        x = layers.Dense(1024, activation="relu")(inputs)
        return keras.Model(inputs, layers.Dense(10, activation="softmax")(x), name="mlp")
    if name == "wide":
        inputs = x = keras.Input((2048,), name="features")
        for _ in range(8):
            x = layers.Dense(2048, activation="relu")(x)
        return keras.Model(inputs, x, name="wide")
    if name == "cnn":
        return keras.applications.MobileNetV2(weights=None, input_shape=(224, 224, 3))
    image = keras.Input((32, 32, 3), name="image")
    table = keras.Input((16,), name="table")
    x = layers.Flatten()(layers.Conv2D(8, 3, activation="relu")(image))
    y = layers.Dense(32, activation="relu")(table)
    out = layers.Dense(4)(layers.Concatenate()([x, y]))
    return keras.Model({"image": image, "table": table}, out, name="multi")


def load_model(tf, keras, spec):
    if spec.startswith("sample:"):
        return build_sample(keras, spec[len("sample:"):])
    path, fmt = check_model_path(spec)
    try:
        if fmt == "savedmodel":
            return tf.saved_model.load(path)
        return keras.models.load_model(path, compile=False)
    except Exception as exc:
        raise ProbeFailure(
            "model_load_failed", f"Could not load {spec} as {fmt}: {type(exc).__name__}: {exc}"
        ) from exc


def check_model_path(spec):
    """(absolute path, format) of a model file or folder; ProbeFailure saying what is wrong.

    tflaunch's launcher calls this too, so users hear about a bad path before any launch.
    """
    path = os.path.abspath(os.path.expanduser(spec))
    if not os.path.exists(path):
        raise ProbeFailure("model_not_found", f"The model {spec} does not exist. Check the path.")
    fmt = model_format(path)
    if fmt == "savedmodel":
        if not any(os.path.exists(os.path.join(path, f)) for f in ("saved_model.pb", "saved_model.pbtxt")):
            raise ProbeFailure(
                "not_saved_model",
                f"{spec} is a folder but not a SavedModel: it has no saved_model.pb. "
                "Export one with model.export(path) or tf.saved_model.save().")
    elif fmt is None:
        raise ProbeFailure(
            "unsupported_format",
            f"{spec} is not a model tflaunch can load. Use a SavedModel folder, "
            "a .keras file or an .h5 file.")
    check_file_signature(spec, path, fmt)
    return path, fmt


def model_format(path):
    if os.path.isdir(path):
        return "savedmodel"
    ext = os.path.splitext(path)[1].lower()
    return {".keras": "keras", ".h5": "h5", ".hdf5": "h5"}.get(ext)


def check_file_signature(spec, path, fmt):
    """Catch truncated or mislabelled files before TensorFlow gives a cryptic error.

    Only headers are read (a zip's directory sits at its end, so truncation shows): a CRC
    pass over the whole archive would add a visible share to the load it measures.
    """
    if fmt == "keras":
        import zipfile

        ok = zipfile.is_zipfile(path)
        if ok:
            with zipfile.ZipFile(path) as archive:
                ok = "config.json" in archive.namelist()
        what = "a .keras archive"
    elif fmt == "h5":
        with open(path, "rb") as f:
            ok = f.read(len(HDF5_SIGNATURE)) == HDF5_SIGNATURE
        what = "an HDF5 file"
    else:
        return
    if not ok:
        raise ProbeFailure(
            "corrupt_model",
            f"{spec} is not a valid {fmt} model: it is not {what} (truncated or corrupt). "
            "Save the model again.")


def trace(tf, model, xla):
    """A concrete function for the model and the TensorSpecs of its inputs."""
    if not hasattr(model, "inputs"):  # a SavedModel: its signatures are already traced
        signatures = getattr(model, "signatures", {})
        if not signatures:
            raise ProbeFailure("no_signature", "The SavedModel has no serving signature; "
                               "export it with model.export(path).")
        fn = signatures.get("serving_default") or next(iter(signatures.values()))
        args, kwargs = fn.structured_input_signature
        return fn, (list(args), dict(kwargs))
    if not model.inputs:
        raise ProbeFailure("no_signature", "The model has no known inputs; build it on an Input.")
    names = [t.name.split(":")[0] for t in model.inputs]
    specs = {n: tf.TensorSpec(t.shape, t.dtype, name=n) for n, t in zip(names, model.inputs)}
    structure = getattr(model, "_inputs_struct", None)

    def forward(**kwargs):
        arg = kwargs if isinstance(structure, dict) else [kwargs[n] for n in names]
        return model(arg[0] if isinstance(arg, list) and len(arg) == 1 else arg, training=False)

    fn = tf.function(forward, jit_compile=True if xla else None)
    return fn.get_concrete_function(**specs), ([], specs)


def make_inputs(tf, specs, batch):
    def tensor(spec):
        shape = [batch if i == 0 and d is None else (d or 1) for i, d in enumerate(spec.shape)]
        if spec.dtype.is_floating:
            return tf.random.stateless_uniform(shape, seed=(0, 0), dtype=spec.dtype)
        if spec.dtype == tf.string:
            return tf.fill(shape, "")
        return tf.zeros(shape, dtype=spec.dtype)

    args, kwargs = specs
    return [tensor(s) for s in args], {k: tensor(s) for k, s in kwargs.items()}


def infer(tf, fn, inputs):
    """One inference, with outputs copied to host so asynchronous devices have finished."""
    outputs = fn(*inputs[0], **inputs[1])
    return tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, outputs)


def steady_latency(tf, fn, inputs, runs):
    samples = []
    for _ in range(max(runs, 0)):
        start = time.perf_counter()
        infer(tf, fn, inputs)
        samples.append(time.perf_counter() - start)
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)
    return {"n": len(ordered), "median": statistics.median(ordered), "min": ordered[0], "max": ordered[-1],
            "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]}


def cpu_model():
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        if names:
            return names[0]
    return platform.processor() or platform.machine()


def environment(tf, keras):
    gpus = []
    for gpu in tf.config.list_physical_devices("GPU"):
        details = tf.config.experimental.get_device_details(gpu)
        try:
            peak = tf.config.experimental.get_memory_info(gpu.name.replace("physical_device:", ""))["peak"]
        except (ValueError, RuntimeError):
            peak = None
        gpus.append({"name": gpu.name, "model": details.get("device_name", ""),
                     "compute_capability": details.get("compute_capability"),
                     "allocator_peak": peak})
    driver = None
    with contextlib.suppress(OSError):
        with open("/proc/driver/nvidia/version") as f:
            driver = f.readline().strip()
    build = tf.sysconfig.get_build_info()
    return {"tensorflow": tf.__version__, "keras": getattr(keras, "__version__", ""),
            "python": platform.python_version(), "executable": sys.executable,
            "platform": platform.platform(), "cpu": cpu_model(), "cores": os.cpu_count(),
            "gpus": gpus, "driver": driver, "cuda": build.get("cuda_version"),
            "cudnn": build.get("cudnn_version")}


def describe(model, spec, specs, inputs):
    if hasattr(model, "count_params"):
        params = int(model.count_params())
    else:
        params = int(sum(v.shape.num_elements() or 0 for v in getattr(model, "variables", [])))
    fmt, size = "sample", None
    if not spec.startswith("sample:"):
        path = os.path.abspath(os.path.expanduser(spec))
        fmt = model_format(path)
        files = os.walk(path) if os.path.isdir(path) else [(os.path.dirname(path), [], [os.path.basename(path)])]
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in files for f in fs)
    names = [None] * len(specs[0]) + list(specs[1])
    all_specs = list(specs[0]) + list(specs[1].values())
    fed = list(inputs[0]) + list(inputs[1].values())
    return {"name": getattr(model, "name", None) or os.path.basename(spec.rstrip("/")), "source": spec,
            "format": fmt, "params": params, "bytes_on_disk": size,
            "inputs": [{"name": n or s.name, "shape": list(s.shape), "dtype": s.dtype.name,
                        "fed_shape": list(t.shape)} for n, s, t in zip(names, all_specs, fed)]}


def save_formats(channel, model, stem, formats, out):
    if not hasattr(model, "save"):
        raise ProbeFailure("cannot_convert", "A SavedModel cannot be turned back into a Keras model; "
                           "convert from the .keras or .h5 file it was exported from.")
    os.makedirs(out, exist_ok=True)
    for fmt in formats:
        path = os.path.join(out, f"{stem}_savedmodel" if fmt == "savedmodel" else f"{stem}.{fmt}")
        if fmt == "savedmodel":
            model.export(path, verbose=False)
        else:
            model.save(path)
        channel.emit("saved", "load", path=path, format=fmt)


def main(argv=None):
    parser = argparse.ArgumentParser(description="tflaunch probe")
    parser.add_argument("config", nargs="?", help="run configuration as JSON")
    parser.add_argument("--config", dest="config_file", help="read the configuration from a file")
    parser.add_argument("--save-sample", choices=SAMPLES, help="save a built-in sample model")
    parser.add_argument("--convert", metavar="MODEL", help="save a .keras or .h5 model in other formats")
    parser.add_argument("--format", action="append", choices=FORMATS, help="format(s) to save")
    parser.add_argument("--out", help="folder for --save-sample and --convert")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    channel = Channel()
    exit_with_parent()
    probe = None
    code = 0
    try:
        if args.save_sample or args.convert:
            tf, keras = import_tensorflow()
            source = args.convert or f"sample:{args.save_sample}"
            stem = args.save_sample or os.path.splitext(os.path.basename(source.rstrip("/")))[0]
            save_formats(channel, load_model(tf, keras, source), stem, args.format or list(FORMATS), args.out or ".")
        else:
            if args.config_file:
                with open(args.config_file, encoding="utf-8") as f:
                    config = json.load(f)
            else:
                config = json.loads(args.config or "{}")
            if not isinstance(config, dict) or not isinstance(config.get("model"), str):
                raise ProbeFailure("bad_config", "The probe's configuration needs a 'model' string.")
            probe = Probe(channel, config)
            probe.run()
    except ProbeFailure as exc:
        channel.emit("error", probe.current if probe else "load", kind=exc.kind, message=exc.message,
                     detail="")
        code = 2
    except Exception as exc:
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-12:])
        channel.emit("error", probe.current if probe else "load", kind="exception",
                     message=f"{type(exc).__name__}: {exc}", detail=detail)
        code = 3
    sys.stderr.flush()
    # Skip interpreter teardown: after TensorFlow it costs over half a second per run.
    os._exit(code)


if __name__ == "__main__":
    main()
