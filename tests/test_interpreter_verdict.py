"""The interpreter check in words: what is wrong and what to do in a line or two; what the
interpreter wrote kept apart, for a tooltip."""

from __future__ import annotations

import json

from tflaunch.core.run.interpreters.interpreter_verdict import REASON_CHARS, interpreter_verdict, not_started

TRACEBACK = ('Traceback (most recent call last):\n  File "<string>", line 2, in <module>\n'
             "ModuleNotFoundError: No module named 'tensorflow'\n")


def test_an_import_error_of_tensorflow_says_it_is_missing_and_what_to_do():
    verdict = interpreter_verdict("/usr/bin/python3", 1, "", TRACEBACK)
    assert not verdict.ok
    assert verdict.message == ("/usr/bin/python3 has no TensorFlow: No module named 'tensorflow'. Install it there "
                               "(/usr/bin/python3 -m pip install tensorflow) or choose another interpreter.")
    assert verdict.detail == TRACEBACK.strip() and "<module>" not in verdict.message


def test_each_failure_is_one_plain_sentence_or_two_with_the_raw_output_apart():
    answer = json.dumps({"python": "3.11.2", "executable": "/usr/bin/python3", "tensorflow": None})
    assert interpreter_verdict("/usr/bin/python3", 0, answer).message.startswith(
        "/usr/bin/python3 (Python 3.11.2) has no TensorFlow. Install it there")
    source = 'print(json.dumps({"python": platform.python_version(),\n' * 50  # a wrapper echoing the code
    echoed = interpreter_verdict("/bin/echo", 0, source)
    assert echoed.message.startswith("/bin/echo did not run as Python (it exited with code 0 and said nothing)")
    assert "json.dumps" not in echoed.message and "json.dumps" in echoed.detail
    broken = interpreter_verdict("py", 1, "", "Traceback:\n  x\nImportError: libcudart.so.12: " + "x" * 400)
    assert broken.message.startswith("py fails before it can run anything: ImportError: libcudart.so.12")
    assert len(broken.message) < REASON_CHARS + 120 and broken.message.count("\n") == 0
    old = interpreter_verdict("python2", 1, "", '  File "<string>", line 3\nSyntaxError: invalid syntax\n')
    assert "is not Python 3.8 or newer" in old.message
    gone = not_started("/nope/python", "execve: No such file or directory.")
    assert gone.message == ("/nope/python cannot be started (execve: No such file or directory). Give the path of "
                            "a Python executable with TensorFlow.")
    good = json.dumps({"python": "3.11.7", "executable": "/env/python", "tensorflow": "2.21.0"})
    assert interpreter_verdict("/env/python", 0, good).message.startswith("Python 3.11.7, TensorFlow 2.21.0, ")
