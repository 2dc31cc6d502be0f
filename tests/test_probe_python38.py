"""What the warm server does without Python 3.9+'s socket calls and flags: it runs in the
user's interpreter, which may be 3.8 (`make lint` checks the rest with vermin)."""

from __future__ import annotations

import array
import os
import socket
import sys
from types import SimpleNamespace

import pytest

from tflaunch.core.probe.warm import fork_refusals
from tflaunch.core.probe.warm.forkserver import receive_fds


def test_descriptors_arrive_without_socket_recv_fds(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delattr(socket, "recv_fds")  # as on Python 3.8
    note = tmp_path / "note"
    note.write_text("passed along")
    server, client = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with server, client, open(note) as first:
        client.sendmsg([b'{"argv": ["x"]}\n'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                   _ints(first.fileno(), first.fileno()))])
        data, fds = receive_fds(server, 1 << 16, 8)
        try:
            assert data == b'{"argv": ["x"]}\n'
            assert len(fds) == 2
            assert [os.read(fd, 100) for fd in fds] == [b"passed along", b""]  # two descriptors of one open file
        finally:
            for fd in fds:
                os.close(fd)


def test_a_message_without_descriptors_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(socket, "recv_fds")
    server, client = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with server, client:
        client.sendall(b'{"query": "state"}\n')
        assert receive_fds(server, 1 << 16, 8) == (b'{"query": "state"}\n', [])


def test_shadowed_modules_on_a_python_without_safe_path(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """sys.flags.safe_path (-P) is Python 3.11's: 3.8 raised AttributeError at every warm launch."""
    (tmp_path / "json.py").write_text("")
    (tmp_path / "train.py").write_text("")
    monkeypatch.setattr(sys, "flags", SimpleNamespace(isolated=0))
    request = {"argv": [str(tmp_path / "train.py")], "cwd": str(tmp_path)}
    assert fork_refusals.shadowed_modules(request, {"json", "os"}) == [str(tmp_path / "json.py")]


def _ints(*fds: int) -> bytes:
    return array.array("i", fds).tobytes()
