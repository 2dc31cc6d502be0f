"""A profile or trust file nested deeper than any of tflaunch's is refused before it is parsed:
tomllib recurses once per level, and a file 5000 arrays deep ran the app's thread into Python's
recursion limit, where a Qt event filter called by the garbage collector failed too (CI saw
`RecursionError` in the wheel guard during `test_one_damaged_profile_loses_itself_not_the_list`)."""

from __future__ import annotations

import sys
import tomllib

import pytest
import tomli_w
from hypothesis import example, given
from hypothesis import strategies as st

from tflaunch.core.store import shallow_toml
from tflaunch.core.store.profiles import Profile, ProfileError
from tflaunch.core.store.trust import TrustFile

DEEP = 'schema_version = 1\nname = "x"\n[settings]\nmodel = "sample:mlp"\n[evidence]\nx = ' + "[" * 5000 + "]" * 5000


@pytest.mark.parametrize(("text", "depth"), [
    ("a = 1", 0), ("[t]\na = 1", 1), ("[[runs]]\nv = 1", 2), ("x = [[1], [2]]", 2), ("x = {a = {b = [1]}}", 3),
    ('x = "[[[["', 0), ("x = '[[[['", 0), ('x = """ [[[ \\""" """', 0), ("x = '''\n[[[\n'''\ny = [1]", 1),
    ('x = "a\\"[[["', 0), ("# [[[[\nx = [1]", 1), ("[" * 5000 + "]" * 5000, 5000)])
def test_the_depth_counts_brackets_outside_strings_and_comments(text, depth):
    assert shallow_toml.nesting_depth(text) == depth


def _deepest_stack_while(call) -> int:
    """The most Python frames on the stack, above this one, while call() runs."""
    depth = deepest = 0

    def profile(frame, event, arg):
        nonlocal depth, deepest
        if event == "call":
            depth += 1
            deepest = max(deepest, depth)
        elif event == "return":
            depth -= 1

    sys.setprofile(profile)
    try:
        call()
    except ProfileError:
        pass
    finally:
        sys.setprofile(None)
    return deepest


def test_a_profile_5000_arrays_deep_is_refused_without_going_deep():
    with pytest.raises(ProfileError, match=r"nests arrays or tables 5000 deep \(at most 32 are read\)"):
        Profile.from_toml(DEEP, "deep.toml")
    assert _deepest_stack_while(lambda: Profile.from_toml(DEEP, "deep.toml")) < 50


def test_a_deep_trust_file_trusts_nothing(tmp_path):
    path = tmp_path / "trust.toml"
    path.write_text("[accepted]\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    assert TrustFile(path).accepted(tmp_path / "p.toml") is None


_values = st.recursive(st.integers() | st.text(max_size=5),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                                   max_size=3), max_leaves=12)


@given(st.dictionaries(st.text(max_size=4), _values, max_size=4))
@example({"a": [[[["[[["]]]]})
def test_what_tflaunch_writes_reads_back_within_its_depth(data):
    """Any document tomli_w writes is read back the same (strings full of brackets included),
    its depth no more than its values' nesting plus a table header."""
    text = tomli_w.dumps(data)
    assert shallow_toml.nesting_depth(text) <= _nesting(data) + 1
    assert shallow_toml.loads(text) == tomllib.loads(text) == data


def _nesting(value) -> int:
    if isinstance(value, list):
        return 1 + max(map(_nesting, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_nesting, value.values()), default=0)
    return 0


@given(st.text(alphabet="[]{}\"'#\\\n =ax1,.", max_size=60))
def test_any_text_is_read_or_refused_never_crashes(text):
    try:
        shallow_toml.loads(text)
    except (tomllib.TOMLDecodeError, shallow_toml.TooDeepError):
        pass
