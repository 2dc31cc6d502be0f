"""The model subject: the probe's seven phases for a model (runner.py), how it is found, loaded,
fed and called (model_files.py, samples.py, user_code.py, entry_point.py, input_shapes.py,
input_values.py, inference.py), described and explained (describe.py, explain.py), converted
(convert.py), and its SavedModel graph read as data (graph_ops.py, run by path from
core/store/model_code.py). Imports nothing of the observer or the warm server (pyproject.toml's
import contracts). Nothing is imported here: the launcher imports one module at a time."""
