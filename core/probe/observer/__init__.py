"""The program observer: its rules (observe.py, the one module that decides what a phase, a
step and an inference are), the hooks that notify it (tf_hooks.py, keras_hooks.py, with
keras_frameworks.py, the only module that asks which Keras is loaded), how a hook goes in
unseen (hook_tools.py) and how the observer is put into a program (observe_install.py, called
by the launch hook and a warm child by name). Imports nothing of the model subject, the warm
server or the serving warm-up (pyproject.toml's import contracts). Nothing is imported here."""
