"""The operations a SavedModel's graph holds, read from saved_model.pb without running it.

Run as a script in a child process (core/store/model_code.py): the GUI process never
imports TensorFlow, and a crafted file must not stall or crash the app. Only TensorFlow's
protobuf classes are loaded, from its package folder, without running tensorflow's
__init__ (which would import all of TensorFlow: seconds, and code this does not need).
Prints one JSON object: {"ops": {name: count}} or {"error": sentence}.
"""

import importlib.util
import json
import os
import sys
import types
from typing import Any

# saved_model.pb holds the graph and its constants; larger is not a model this reads.
MOST_BYTES = 2 << 30


def _saved_model_class() -> Any:
    spec = importlib.util.find_spec("tensorflow")
    if spec is None or not spec.submodule_search_locations:
        return None
    package = types.ModuleType("tensorflow")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["tensorflow"] = package
    from tensorflow.core.protobuf import saved_model_pb2  # after the package stub

    return saved_model_pb2.SavedModel


def graph_ops(folder: str) -> dict:  # type: ignore[type-arg]
    # The probe's folder, above this room: run as a script, this file is no package's.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from outside_files import read_capped  # type: ignore[import-not-found]

    saved_model = _saved_model_class()
    if saved_model is None:
        return {"error": "TensorFlow's protobuf classes are not installed with tflaunch's own Python, "
                         "so the graph's operations cannot be listed"}
    data = read_capped(os.path.join(folder, "saved_model.pb"), MOST_BYTES, "The SavedModel graph", timeout=60)
    message = saved_model()
    message.ParseFromString(data)
    ops: dict = {}  # type: ignore[type-arg]
    for meta in message.meta_graphs:
        graph = meta.graph_def
        nodes = list(graph.node)
        for function in graph.library.function:
            nodes += list(function.node_def)
        for node in nodes:
            ops[node.op] = ops.get(node.op, 0) + 1
    return {"ops": ops}


def main() -> None:
    try:
        result = graph_ops(sys.argv[1])
    except Exception as exc:  # a crafted file: its error is the answer, never a traceback
        result = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    sys.stdout.write(json.dumps(result))


if __name__ == "__main__":
    main()
