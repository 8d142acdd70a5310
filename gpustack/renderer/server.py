"""The warm renderer's connections and lifetime.

Each connection gets a thread, which acknowledges it at once (the client's sign that the
renderer lives), reads the request, answers a cache hit without waiting, and otherwise renders
with the caller's environment by the three steps of :func:`gpustack.actions.argocd.generate`,
which ``gpustack template --argocd`` runs in one go, so both print the same bytes and errors:
``check`` in the caller's working directory (the process has one, so one caller at a time holds
it), ``build`` under the render lock (jsii's kernel takes one caller at a time), and ``finish``
under the layout lock (the serializer's caches are the process's). Parallel Applications so
overlap: one call's layout runs while the next one's cdk8s render waits on Node.

A render's jsii objects are handed back (:mod:`gpustack.constructs.release`) when no call is
being answered, a batch at a time (:meth:`Renderer.release_idle`, from the main thread's tick),
not by the render that made them nor by the next one: a caller never waits for more than one
batch, and a burst of parallel Applications does not wait for each other's releases. At most
:data:`MAX_PENDING` objects wait; past that a render releases them first.

A renderer leaves by unlinking its socket (new calls then start a new renderer) and exits once
the calls it accepted are answered: after ``GPUSTACK_RENDERER_MAX_RENDERS`` renders, past
``GPUSTACK_RENDERER_RSS_MIB`` with its Node, after ``GPUSTACK_RENDERER_IDLE_S`` without a call,
or after an unexpected exception in a render. When gpustack's files change on disk under it
(an upgrade in place, an edited checkout), it answers no call any more, only "retry", so nothing
is rendered or served from the cache by code that is not the one installed. The files are looked
at when a call comes at least :data:`STAMP_S` after the last look (stat-ing some two thousand
files takes milliseconds, too much for every one of eight parallel cached calls): an edit is
seen within that time, less than a fresh ``gpustack template`` spends importing, during which an
edit would reach it half-way just the same.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from gpustack.render_client.rundir import Settings
from gpustack.render_client.wire import (
    ACK,
    Answer,
    Broken,
    Request,
    recv_request,
    send_answer,
)
from gpustack.renderer.memory import resident_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

    from gpustack.actions.argocd import Generated
    from gpustack.renderer.cache import OutputCache

_T = TypeVar("_T")

#: How often the main thread looks at the renderer's state (idle, retired).
TICK_S = 0.2
#: Seconds between two looks at gpustack's files on disk.
STAMP_S = 0.2
#: jsii objects left pending at most (a cluster's rendering leaves about 100): renders that
#: follow each other without a pause release every ~30 renders.
MAX_PENDING = 3000
#: jsii objects released at a time while idle (about 20 ms).
RELEASE_BATCH = 100


def _watched() -> tuple[str, ...]:
    """Each packaged file synthesis reads, and each folder holding them (a file added or
    removed changes its folder)."""
    from gpustack.synth.digest import packaged_files

    files = [str(path) for path in packaged_files().values()]
    return (*sorted({os.path.dirname(f) for f in files}), *files)


def _stamp(paths: tuple[str, ...]) -> tuple[tuple[int, int, int], ...]:
    """Each path's inode, mtime and size (``(0, 0, 0)`` once it is gone)."""
    found = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            found.append((0, 0, 0))
            continue
        found.append((st.st_ino, st.st_mtime_ns, st.st_size))
    return tuple(found)


def _log(line: str) -> None:
    sys.stderr.write(f"gpustack renderer {os.getpid()}: {line}\n")
    sys.stderr.flush()


class Renderer:
    """One renderer, listening on ``listener`` (bound at ``path``)."""

    def __init__(self, listener: socket.socket, path: Path, knobs: Settings) -> None:
        self.listener, self.path, self.knobs = listener, path, knobs
        self.inode = os.stat(path).st_ino
        self.ready = threading.Event()
        self.render_lock = threading.Lock()
        self.cwd_lock = threading.Lock()
        self.layout_lock = threading.Lock()
        self.state_lock = threading.Lock()
        self.active = 0
        self.last = time.monotonic()
        self.renders = 0
        self.retired: str | None = None
        self.stale = False
        self.looked = 0.0
        self.cache: OutputCache | None = None
        self.cache_made = threading.Event()

    def accept_loop(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed on exit
            with self.state_lock:
                self.active += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            with conn:
                conn.sendall(ACK)
                request = recv_request(conn)
                self.ready.wait()
                send_answer(conn, self.answer(request))
        except (Broken, OSError):
            pass  # the client left; it starts over or renders itself
        finally:
            with self.state_lock:
                self.active -= 1
                self.last = time.monotonic()

    def warm_up(self) -> None:
        """Start Node and cdk8s, note gpustack's files, import the renderer, then take calls;
        the generator's digest (tens of milliseconds of hashing) is taken after, so the first
        call does not wait for it: until then nothing is looked up or kept."""
        from gpustack.constructs.release import release_when_told
        from gpustack.synth.errors import SynthError
        from gpustack.synth.node import start_cdk8s

        with contextlib.suppress(SynthError):  # a missing Node is the render's error
            start_cdk8s()
        release_when_told()  # see release_idle
        # before the imports: an edit made while they run is then a change, not the baseline
        self.watched = _watched()
        self.stamp = _stamp(self.watched)
        self.looked = time.monotonic()
        from gpustack import __version__
        from gpustack.actions import argocd
        from gpustack.renderer.cache import OutputCache
        from gpustack.synth.digest import generator_digest

        self.steps: ModuleType = argocd  # check, build, finish
        self.ready.set()
        _log(f"ready on {self.path}")
        try:
            digest = generator_digest()
            self.cache = OutputCache(f"{__version__}\0{digest}", self.knobs.cache_bytes)
        finally:
            self.cache_made.set()  # without a cache (the digest failed) calls still render

    def _changed(self) -> bool:
        """Whether gpustack's files changed since warm-up, looked at every :data:`STAMP_S`."""
        with self.state_lock:
            now = time.monotonic()
            if self.stale or now - self.looked < STAMP_S:
                return self.stale
            self.looked = now
        if _stamp(self.watched) != self.stamp:
            self.stale = True
        return self.stale

    def answer(self, request: Request) -> Answer:
        if self._changed():
            self.retire("gpustack changed on disk")
            return Answer(retry="gpustack changed on disk")
        profile = _profile(request)
        cache = self.cache
        if profile is not None and cache is not None:
            hit = cache.lookup(request.cwd, profile)
            if hit is not None:
                return Answer(stdout=hit)
        return self._render(request)

    def release_idle(self) -> int:
        """Hand jsii back the finished renders' objects (a round trip each, ~20 ms for a
        cluster: :mod:`gpustack.constructs.release`) while no call is being answered, a
        hundred at a time, so a call that comes meanwhile waits for one batch at most; returns
        how many were released."""
        from gpustack.constructs.release import pending, release_pending

        released = 0
        while pending():
            with self.state_lock:
                if self.active:
                    break
            with self.render_lock:
                released += release_pending(RELEASE_BATCH)
        return released

    def _render(self, request: Request) -> Answer:
        from gpustack.actions.argocd import Generated
        from gpustack.constructs.release import pending, release_pending

        started = time.time_ns()  # before the inputs are read: see OutputCache.store
        with self.cwd_lock:
            try:
                os.chdir(request.cwd)
            except OSError as exc:
                return Answer(1, f"Error: cannot enter {request.cwd!r}: {exc.strerror}\n")
            try:
                checked = self._step(self.steps.check, request.env)
            finally:
                os.chdir("/")
        if isinstance(checked, Answer | Generated):
            return self._answer(checked, request, started)
        with self.render_lock:
            if pending() > MAX_PENDING:
                release_pending()
            built = self._step(self.steps.build, checked)
            self.renders += 1
        if not isinstance(built, Answer | Generated):
            with self.layout_lock:
                built = self._step(self.steps.finish, checked, built)
        self._bound()
        return self._answer(built, request, started)

    def _answer(self, done: Answer | Generated, request: Request, started: int) -> Answer:
        """A step's failure as it is, an error as its one line, manifests kept in the cache."""
        if isinstance(done, Answer):
            return done
        if done.error is not None:
            return Answer(1, f"Error: {done.error}\n")
        files = [str(f) for f in done.files]
        self.cache_made.wait()  # a first render that beat the digest is still kept
        if self.cache is not None:
            self.cache.store(request.cwd, done.profile, files, done.stdout, started)
        return Answer(stdout=done.stdout)

    def _step(self, step: Callable[..., _T], *args: Any) -> _T | Answer:
        """One step of the render; an unexpected exception retires the renderer and answers
        with its traceback."""
        try:
            return step(*args)
        except Exception:
            self.retire("a render failed unexpectedly")
            return Answer(1, traceback.format_exc())

    def _bound(self) -> None:
        if self.renders >= self.knobs.max_renders:
            self.retire(f"{self.renders} renders")
        elif (used := resident_bytes()) > self.knobs.rss_bytes:
            self.retire(f"{used >> 20} MiB resident")

    def retire(self, why: str) -> None:
        """Take no new calls: unlink the socket (if it is still this renderer's)."""
        with self.state_lock:
            if self.retired is not None:
                return
            self.retired = why
        _log(f"retiring: {why}")
        try:
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        except OSError:
            pass

    def run(self) -> None:
        """Return once retired (or idle) with every accepted call answered."""
        while True:
            time.sleep(TICK_S)
            try:
                if self.retired is None:
                    self.release_idle()
            except Exception:  # jsii's kernel broke: new calls go to a new renderer
                _log(traceback.format_exc())
                self.retire("releasing jsii objects failed")
            with self.state_lock:
                active, idle = self.active, time.monotonic() - self.last
            if active == 0 and self.retired is None and idle > self.knobs.idle_s:
                self.retire(f"idle for {idle:.0f} s")
            if active == 0 and self.retired is not None:
                self.listener.close()
                return


def _profile(request: Request) -> str | None:
    """The profile the request names, if it is one the render would read (else the render
    gives the error)."""
    from gpustack.gitops.argocd_plugin import ParameterError, check_inside, profile_parameter

    try:
        name = profile_parameter(request.env)
        check_inside(name, request.cwd)
    except ParameterError:
        return None
    return name
