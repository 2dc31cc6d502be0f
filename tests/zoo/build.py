"""Build the model zoo: varied real architectures, built from code and saved to disk.

    python tests/zoo/build.py OUTDIR [NAME ...]

Builds every zoo model (or only the named ones; `multi_io` names its three entries),
saves each under OUTDIR, loads it back with plain TensorFlow/Keras, runs a forward pass on
sensible inputs, and writes OUTDIR/manifest.json:

    {NAME: {"path", "format": keras|h5|savedmodel|code, "imports": [.py paths to import
     before loading], "inputs": {name: {"shape", "dtype", ...}}, "signatures": [...],
     "params": int, "notes": str, ...}}

Input names are those a user feeds: dict keys for a dict-input Keras model (its tensor
names differ, see "tensor_names"), else the tensor or signature argument names. For a
SavedModel "inputs" are serving_default's (else the first signature by name), and
"signature_inputs" gives every signature's. Token inputs carry "vocab" (feed ids
1..vocab-1), string inputs "vocabulary". What is expected to fail (a load, a too small
image) is recorded, message included, under "errors". "params" counts weights a user
expects: no seed-generator state, no optimizer.

Runs in its own process: it imports TensorFlow, which the test process never does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import keras
import zoo_keras as k  # the zoo's own modules: this script's folder is first on sys.path
import zoo_savedmodels as s
from zoo_entries import ZOO_LAYERS, Entry, summary

BUILDERS: dict[str, Callable[[Path], dict[str, Entry]]] = {
    "lstm_masked": k.build_lstm_masked,
    "transformer": k.build_transformer,
    "fcn": s.build_fcn,
    "dict_strings": k.build_dict_strings,
    "custom_layer": k.build_custom_layer,
    "lambda_layer": k.build_lambda_layer,
    "tf_module": s.build_tf_module,
    "multi_signature": s.build_multi_signature,
    "tf1_graph": s.build_tf1_graph,
    "mixed_precision": k.build_mixed_precision,
    "multi_io": k.build_multi_io,
    "keras_export_dropout": s.build_keras_export_dropout,
    "h5_masking": k.build_h5_masking,
    "images_unknown": k.build_images_unknown,
    "code_builder": k.build_code_builder,
}
GROUPS = {"multi_io_keras": "multi_io", "multi_io_h5": "multi_io", "multi_io_savedmodel": "multi_io"}

# Loading these in a fresh process: what fails, and that the documented remedy works.
FRESH_CHECK = r"""
import importlib.util, json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras
result = {}
def first_line(e):
    return [type(e).__name__, str(e)]
def attempt(key, fn):
    try:
        fn(); result[key] = None
    except Exception as e:
        result[key] = first_line(e)
custom, zoo_layers, lam = sys.argv[1:4]
if custom:
    attempt("custom_without_imports", lambda: keras.models.load_model(custom, compile=False))
    spec = importlib.util.spec_from_file_location("zoo_layers", zoo_layers)
    module = importlib.util.module_from_spec(spec); sys.modules["zoo_layers"] = module; spec.loader.exec_module(module)
    attempt("custom_with_imports", lambda: keras.models.load_model(custom, compile=False))
if lam:
    attempt("lambda_safe_mode", lambda: keras.models.load_model(lam, compile=False))
    attempt("lambda_unsafe", lambda: keras.models.load_model(lam, compile=False, safe_mode=False))
print("RESULT" + json.dumps(result))
"""


def check_in_fresh_process(manifest: dict[str, Entry]) -> None:
    """custom_layer must fail without its import and load with it; lambda_layer must fail
    in safe mode and load with safe_mode=False. Records the messages; raises otherwise."""
    custom = manifest.get("custom_layer", {}).get("path", "")
    lam = manifest.get("lambda_layer", {}).get("path", "")
    if not custom and not lam:
        return
    proc = subprocess.run(
        [sys.executable, "-c", FRESH_CHECK, custom, str(ZOO_LAYERS), lam], capture_output=True, text=True, timeout=300
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT")]
    if proc.returncode or not lines:
        raise RuntimeError(f"fresh-process check failed:\n{proc.stdout}\n{proc.stderr}")
    result = {k: v and summary(*v) for k, v in json.loads(lines[-1][len("RESULT") :]).items()}
    if custom:
        without, with_ = result["custom_without_imports"], result["custom_with_imports"]
        assert without and with_ is None, result
        entry = manifest["custom_layer"]
        entry["errors"] = {"load without imports": without}
        entry["notes"] += f"; without importing zoo_layers.py first: {without}"
    if lam:
        safe, unsafe = result["lambda_safe_mode"], result["lambda_unsafe"]
        assert safe and unsafe is None, result
        entry = manifest["lambda_layer"]
        entry["errors"] = {"load with safe_mode=True": safe}
        entry["notes"] += f"; default load: {safe}"


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    out = Path(argv[0]).resolve()
    wanted = argv[1:] or list(BUILDERS)
    unknown = [n for n in wanted if n not in BUILDERS and n not in GROUPS]
    if unknown:
        print(f"unknown zoo names: {', '.join(unknown)}; known: {', '.join([*BUILDERS, *GROUPS])}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    groups = list(dict.fromkeys(GROUPS.get(n, n) for n in wanted))
    manifest: dict[str, Entry] = {}
    start = time.perf_counter()
    for group in groups:
        keras.backend.clear_session()  # the same layer names and weights whatever is built
        keras.utils.set_random_seed(0)
        began = time.perf_counter()
        entries = BUILDERS[group](out)
        if group in wanted:
            manifest.update(entries)
        else:
            manifest.update({k: v for k, v in entries.items() if k in wanted})
        print(f"{group:22s} {time.perf_counter() - began:6.2f} s", flush=True)
    began = time.perf_counter()
    check_in_fresh_process(manifest)
    print(f"{'fresh-process checks':22s} {time.perf_counter() - began:6.2f} s")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"built {len(manifest)} zoo entries in {time.perf_counter() - start:.1f} s -> {out / 'manifest.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
