"""A zoo of varied real models, built from code by `build.py` in a child process.

Nothing here imports TensorFlow: the test process never does; `build.py` runs as
`python tests/zoo/build.py OUTDIR [NAME ...]` and writes OUTDIR/manifest.json.
"""
