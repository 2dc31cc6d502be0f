"""The warm server: forkserver.py, run by path from core/run/warm/ in the user's interpreter,
and what it loads beside itself by path (fork_refusals.py, warm_child.py). A warm child loads
the observer and tf_setup by name through the probe package, never by import here, so this
room imports nothing of the others (pyproject.toml's import contracts). Nothing is imported here."""
