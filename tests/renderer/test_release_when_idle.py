"""A warm render's jsii objects are handed back while the renderer is idle, a batch at a time
(renderer.server.release_idle): no caller waits for a release, neither the caller whose render
made them nor the next one, nor each of a burst of parallel Applications for the others'."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpustack.actions.argocd import Generated
from gpustack.constructs import release
from gpustack.render_client.rundir import settings
from gpustack.render_client.wire import ACK, Request, recv_answer, send_request
from gpustack.renderer import server
from gpustack.renderer.server import MAX_PENDING, RELEASE_BATCH, Renderer


class Objects:
    """Stands in for jsii's pending objects: how many wait, and each release taken."""

    def __init__(self, waiting: int = 0) -> None:
        self.waiting = waiting
        self.releases: list[int] = []

    def pending(self) -> int:
        return self.waiting

    def release_pending(self, limit: int | None = None) -> int:
        done = self.waiting if limit is None else min(limit, self.waiting)
        self.waiting -= done
        self.releases.append(done)
        return done


@pytest.fixture
def objects(monkeypatch: pytest.MonkeyPatch) -> Objects:
    found = Objects()
    monkeypatch.setattr(release, "pending", found.pending)
    monkeypatch.setattr(release, "release_pending", found.release_pending)
    return found


def renderer(tmp_path: Path, objects: Objects, made: int) -> Renderer:
    """A renderer whose render makes ``made`` jsii objects."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "sock"))
    made_by = Renderer(listener, tmp_path / "sock", settings({}))
    made_by.watched, made_by.stamp = (), ()
    made_by.ready.set()
    made_by.cache_made.set()

    def build(checked: object) -> str:
        objects.waiting += made
        return "built"

    def finish(checked: object, built: object) -> Generated:
        return Generated(stdout=b"kind: Namespace\n", profile="p.yaml")

    made_by.steps = SimpleNamespace(  # type: ignore[assignment]
        check=lambda env: "checked", build=build, finish=finish
    )
    return made_by


def call(made_by: Renderer) -> bytes:
    ours, theirs = socket.socketpair()
    serving = threading.Thread(target=made_by._serve, args=(theirs,))
    with made_by.state_lock:
        made_by.active += 1  # as accept_loop counts it
    serving.start()
    assert ours.recv(1) == ACK
    send_request(ours, Request(os.getcwd(), {}))
    answer = recv_answer(ours)
    serving.join(10)
    ours.close()
    assert answer.exit == 0
    return answer.stdout


def test_a_render_leaves_its_objects_to_the_idle_renderer(tmp_path: Path, objects: Objects) -> None:
    made_by = renderer(tmp_path, objects, made=250)
    assert call(made_by) == b"kind: Namespace\n"
    assert call(made_by) == b"kind: Namespace\n"
    assert objects.releases == [], "a call released objects"
    assert made_by.release_idle() == 500
    assert objects.releases == [RELEASE_BATCH] * 5
    assert objects.waiting == 0
    made_by.listener.close()


def test_nothing_is_released_while_a_call_is_answered(tmp_path: Path, objects: Objects) -> None:
    made_by = renderer(tmp_path, objects, made=0)
    objects.waiting = 150
    made_by.active = 1
    assert made_by.release_idle() == 0 and objects.releases == []
    made_by.active = 0
    assert made_by.release_idle() == 150 and objects.waiting == 0
    made_by.listener.close()


def test_a_render_past_the_bound_releases_first(tmp_path: Path, objects: Objects) -> None:
    made_by = renderer(tmp_path, objects, made=100)
    objects.waiting = MAX_PENDING + 1
    call(made_by)
    assert objects.releases == [MAX_PENDING + 1]
    assert objects.waiting == 100, "the render's own objects wait for the idle renderer"
    made_by.listener.close()


def test_the_main_loop_releases_when_idle(
    tmp_path: Path, objects: Objects, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run() releases at its tick, and leaves once retired."""
    monkeypatch.setattr(server, "TICK_S", 0.01)
    made_by = renderer(tmp_path, objects, made=0)
    objects.waiting = 120
    running = threading.Thread(target=made_by.run)
    running.start()
    for _ in range(500):
        if objects.waiting == 0:
            break
        threading.Event().wait(0.01)
    made_by.retire("test")
    running.join(10)
    assert not running.is_alive()
    assert objects.waiting == 0 and objects.releases == [100, 20]
