"""Converting a model into each format, once, through the probe in a child process."""

from __future__ import annotations

import sys

import pytest

from tflaunch.core.probe.model.model_files import model_format
from tflaunch.core.run.formats import ConversionError, cache_dir, in_formats


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_keras_file_is_converted_once_and_keeps_its_own_format(models):
    source = str(models["mlp"]["keras"])
    paths = in_formats(source, ["keras", "h5", "savedmodel"], sys.executable)
    assert paths["keras"] == source
    assert model_format(paths["h5"]) == "h5" and model_format(paths["savedmodel"]) == "savedmodel"
    assert str(cache_dir()) in paths["h5"]
    mtime = __import__("os").path.getmtime(paths["h5"])
    assert in_formats(source, ["h5"], sys.executable)["h5"] == paths["h5"]
    assert __import__("os").path.getmtime(paths["h5"]) == mtime, "cached, not converted again"


def test_samples_are_saved_in_the_formats_asked_for():
    paths = in_formats("sample:mlp", ["h5"], sys.executable)
    assert paths["h5"].endswith("mlp.h5")


def test_a_saved_model_cannot_be_turned_into_keras(models):
    with pytest.raises(ConversionError, match="cannot be turned back into a Keras model"):
        in_formats(str(models["mlp"]["savedmodel"]), ["keras"], sys.executable)
