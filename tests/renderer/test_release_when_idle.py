"""A warm render's jsii objects are handed back after its answer went out: the caller does not
wait for the ~20 ms of round trips (:mod:`gpustack.constructs.release`), and neither does the
next caller's render, which used to release them first."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Mapping
from pathlib import Path

import pytest

from gpustack.actions.argocd import Generated
from gpustack.constructs import release
from gpustack.render_client.rundir import settings
from gpustack.render_client.wire import ACK, Answer, Request, recv_answer, send_request
from gpustack.renderer.server import Renderer


@pytest.mark.parametrize("cached", [False, True])
def test_the_release_follows_the_answer_and_only_a_render_releases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cached: bool
) -> None:
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "sock"))
    renderer = Renderer(listener, tmp_path / "sock", settings({}))
    renderer.watched, renderer.stamp = (), ()
    renderer.ready.set()
    renderer.cache_made.set()
    received = threading.Event()
    releases: list[bool] = []

    def generate(env: Mapping[str, str]) -> Generated:
        return Generated(stdout=b"kind: Namespace\n", profile="p.yaml")

    def release_pending() -> None:
        releases.append(received.wait(5))  # whether the caller had its answer by then

    renderer.generate = generate
    if cached:
        monkeypatch.setattr(Renderer, "answer_rendered", lambda self, r: (Answer(), False))
    monkeypatch.setattr(release, "release_pending", release_pending)
    ours, theirs = socket.socketpair()
    serving = threading.Thread(target=renderer._serve, args=(theirs,))
    serving.start()
    assert ours.recv(1) == ACK
    send_request(ours, Request(os.getcwd(), {}))
    answer = recv_answer(ours)
    received.set()
    serving.join(10)
    ours.close()
    listener.close()
    assert answer.exit == 0
    assert releases == ([] if cached else [True])
    if not cached:
        assert answer.stdout == b"kind: Namespace\n"
