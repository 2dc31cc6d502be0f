"""The probe: what runs inside the child process, in the user's interpreter.

Standard library only (TensorFlow and, if present, psutil are imported inside functions),
so it runs in any environment that has TensorFlow, with or without tflaunch. The child
runs its ``__main__.py`` by path (``python .../probe/__main__.py CONFIG``); the launcher
imports the same modules normally as ``tflaunch.core.probe`` (model-file checks, sample
names), so both sides share one definition of each. Nothing is imported here: the
launcher must be able to import one module without loading the others.

By concern, each a room (pyproject.toml's import contracts say who may import whom):
observer/ (the program observer: its rules and hooks), model/ (the model subject),
warm/ (the warm server), serving/ (the serving warm-up mode), anatomy.py, and at this level
the command line (main.py) and the base every room shares (channel, failure, tf_setup,
environment, process, age, import_xray, nvtx, outside_files, xla_flags).
"""
