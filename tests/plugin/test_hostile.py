"""The plugin under hostile peers: idle streams, hostile config files, events and socket folders.

Each test drives the plugin the way a misbehaving peer on the node would, over real gRPC on unix
sockets (in-process with the test kubelet, or the console script as a process), and checks that
the plugin keeps serving the kubelet and says what it refused in one log line.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from gpustack.plugin import server
from gpustack.plugin.backends import simulated
from gpustack.plugin.config import MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH, PluginConfig
from gpustack.plugin.testkubelet import KubeletSimulator
from gpustack.plugin.v1beta1 import api_pb2, api_pb2_grpc

from .conftest import H100X8, REPO, InProcessPlugin, PluginProcess, StartPlugin, sim_config

GPU = "nvidia.com/gpu"
U = [g.uuid for g in PluginConfig.from_dict(H100X8).gpustack.simulated.gpus]
RunPlugin = Callable[..., PluginProcess]


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def unhealthy(kubelet: KubeletSimulator) -> set[str]:
    return {i for i, h in kubelet.plugin(GPU).health().items() if h != "Healthy"}


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


def two_gpus() -> dict[str, Any]:
    return {
        "gpustack": {"backend": "simulated", "simulated": {"gpus": [{"index": 0}, {"index": 1}]}}
    }


# --- item 15: idle ListAndWatch streams must not starve unary calls ---------------------------


@pytest.fixture
def hostile_channel(kubelet: KubeletSimulator) -> Iterator[grpc.Channel]:
    """A second client of the plugin's socket, as a hostile peer on the node would dial it."""
    path = os.path.join(kubelet.socket_dir, "nvidia-gpu.sock")
    with grpc.insecure_channel(f"unix:{path}", options=server.CHANNEL_OPTIONS) as channel:
        yield channel


def first_response(stream: Any) -> str:
    """``"open"`` once the stream's first list arrived, else the status code's name."""
    try:
        next(stream)
    except grpc.RpcError as exc:
        return str(exc.code().name)
    return "open"


@pytest.mark.parametrize("idle", [server.MAX_WORKERS - 1, 2 * server.MAX_WORKERS])
def test_idle_streams_do_not_starve_allocate(
    kubelet: KubeletSimulator, start_plugin: StartPlugin, hostile_channel: grpc.Channel, idle: int
) -> None:
    """With the kubelet's stream and ``idle`` more never read, Allocate still answers; streams
    past the limit are refused with RESOURCE_EXHAUSTED, and a closed one frees its slot."""
    start_plugin(H100X8)
    kubelet.wait_for_registration(GPU)
    kubelet.list_and_watch(GPU)
    stub: Any = api_pb2_grpc.DevicePluginStub(hostile_channel)  # type: ignore[no-untyped-call]
    streams = [stub.ListAndWatch(api_pb2.Empty(), timeout=20) for _ in range(idle)]
    with ThreadPoolExecutor(max_workers=idle) as pool:
        outcomes = [pool.submit(first_response, s) for s in streams]
        done, _ = wait(outcomes, timeout=5)
        # Allocate answers with every stream slot taken (today's code times out here).
        response = kubelet.allocate(GPU, [U[0]], timeout=3)
        assert response.container_responses[0].envs
        assert kubelet.preferred(GPU, U[:4], size=2, timeout=3)
        assert len(done) == idle, "every stream is either served or refused at once"
        results = sorted(f.result() for f in outcomes)
        opened = server.MAX_STREAMS - 1  # the kubelet's own stream holds one slot
        assert results == ["RESOURCE_EXHAUSTED"] * (idle - opened) + ["open"] * opened
        for stream in streams:
            stream.cancel()
    # Cancelled streams give their slots back: a new one is served.
    wait_until(lambda: first_response(stub.ListAndWatch(api_pb2.Empty(), timeout=5)) == "open",
               "a stream slot to be freed")  # fmt: skip
    assert not kubelet.plugin(GPU).closed, "the kubelet's own stream is never touched"


def test_refused_streams_are_logged_once_per_burst(
    kubelet: KubeletSimulator,
    start_plugin: StartPlugin,
    hostile_channel: grpc.Channel,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="gpustack.plugin")
    start_plugin(H100X8)
    kubelet.wait_for_registration(GPU)
    kubelet.list_and_watch(GPU)
    stub: Any = api_pb2_grpc.DevicePluginStub(hostile_channel)  # type: ignore[no-untyped-call]
    streams = [stub.ListAndWatch(api_pb2.Empty(), timeout=20) for _ in range(server.MAX_STREAMS)]
    try:
        results = [first_response(s) for s in streams]
        assert results.count("RESOURCE_EXHAUSTED") == 1
        for _ in range(5):
            assert first_response(stub.ListAndWatch(api_pb2.Empty(), timeout=5)) != "open"
    finally:
        for stream in streams:
            stream.cancel()
    refusals = [r.getMessage() for r in caplog.records if "ListAndWatch streams" in r.getMessage()]
    assert len(refusals) == 1, refusals
    assert f"{server.MAX_STREAMS} ListAndWatch streams are open for {GPU}" in refusals[0]


# --- items 16 and 17: hostile config files on SIGHUP ------------------------------------------


def nested(depth: int) -> str:
    return "flags: " + "[" * depth + "]" * depth + "\n"


HOSTILE_RELOADS = {
    "nested-1200": (nested(1200), "nest deeper than"),
    "nested-flow-maps": ("a: " + "{b: " * 1200 + "c" + "}" * 1200 + "\n", "nest deeper than"),
    "empty": ("", "has no settings"),
    "comments-only": ("# the ConfigMap was emptied\n\n   # nothing here\n", "has no settings"),
    "null-document": ("---\n...\n", "has no settings"),
}


@pytest.mark.parametrize(("text", "reason"), HOSTILE_RELOADS.values(), ids=HOSTILE_RELOADS.keys())
def test_sighup_with_a_hostile_config_keeps_the_old_one(
    kubelet: KubeletSimulator, sockdir: Path, run_plugin: RunPlugin, text: str, reason: str
) -> None:
    """The old config stays in force, the refusal is one line, the loop goes on: a kubelet
    restart is still followed by a re-registration, and SIGTERM still stops the plugin."""
    cfg = write(sockdir / "c.yaml", two_gpus())
    proc = run_plugin("--config-file", str(cfg), "--socket-dir", kubelet.socket_dir)
    kubelet.wait_for_registration(GPU)
    assert len(kubelet.list_and_watch(GPU)) == 2
    registrations = len(kubelet.registrations)
    cfg.write_text(text)
    proc.send(signal.SIGHUP)
    line = proc.wait_for_line("reload failed")
    assert str(cfg) in line and reason in line and "keeping the previous configuration" in line
    assert len(line) < 400
    time.sleep(0.3)
    assert len(kubelet.registrations) == registrations, "the old servers stay as they were"
    restarted = kubelet.restart()
    kubelet.wait_for_registration(GPU, timeout=5, after=restarted)
    assert len(kubelet.list_and_watch(GPU)) == 2
    assert proc.finish() == 0
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(("text", "reason"), HOSTILE_RELOADS.values(), ids=HOSTILE_RELOADS.keys())
def test_a_hostile_config_at_start_is_one_line_exit_1(
    sockdir: Path, run_plugin: RunPlugin, text: str, reason: str
) -> None:
    cfg = sockdir / "c.yaml"
    cfg.write_text(text)
    proc = run_plugin("--config-file", str(cfg), "--socket-dir", str(sockdir))
    assert proc.finish(sig=None) == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and f" ERROR {cfg}:" in lines[0] and reason in lines[0], lines


def test_an_unexpected_reload_error_keeps_the_old_config(
    kubelet: KubeletSimulator, sockdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Whatever a reload raises, the main loop survives it (it used to die on RecursionError
    while the gRPC threads kept the process alive, never to re-register again)."""
    caplog.set_level(logging.INFO, logger="gpustack.plugin")
    cfg = write(sockdir / "c.yaml", two_gpus())
    plugin = InProcessPlugin(kubelet.socket_dir, cfg, {})
    try:
        kubelet.wait_for_registration(GPU)
        real = plugin.manager._rt.load_config

        def exploding() -> PluginConfig:
            raise RecursionError("maximum recursion depth exceeded")

        object.__setattr__(plugin.manager._rt, "load_config", exploding)
        plugin.manager.request_reload()
        wait_until(lambda: "reload failed" in caplog.text, "the reload to fail")
        assert "RecursionError" in caplog.text and "keeping the previous" in caplog.text
        object.__setattr__(plugin.manager._rt, "load_config", real)
        restarted = kubelet.restart()
        kubelet.wait_for_registration(GPU, timeout=5, after=restarted)
        assert plugin.thread.is_alive()
    finally:
        assert plugin.stop() == 0


@pytest.mark.parametrize("outcome", ["raises", "loads"])
def test_a_stop_requested_during_a_reload_is_honoured(
    kubelet: KubeletSimulator, sockdir: Path, outcome: str
) -> None:
    """SIGTERM while SIGHUP's parse runs (the handler only sets a flag): the plugin stops."""
    cfg = write(sockdir / "c.yaml", two_gpus())
    plugin = InProcessPlugin(kubelet.socket_dir, cfg, {})
    kubelet.wait_for_registration(GPU)
    real = plugin.manager._rt.load_config

    def interrupted() -> PluginConfig:
        plugin.manager.request_stop()  # what the SIGTERM handler does, mid-parse
        if outcome == "raises":
            raise RecursionError("maximum recursion depth exceeded")
        return real()

    object.__setattr__(plugin.manager._rt, "load_config", interrupted)
    plugin.manager.request_reload()
    plugin.thread.join(timeout=5)
    assert not plugin.thread.is_alive() and plugin.exit_code == 0
    assert not (Path(kubelet.socket_dir) / "nvidia-gpu.sock").exists()


# --- item 18: the simulated events file --------------------------------------------------------


def events_config(path: Path) -> dict[str, Any]:
    doc = sim_config()
    doc["gpustack"]["simulated"]["eventsFile"] = str(path)
    return doc


def append(path: Path, data: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(data)


BAD_LINES = [
    "xid 1 \u00b2".encode(),  # isdigit() but not int(): this line killed the monitor
    "xid 1 \u0663".encode(),  # an Arabic-Indic three: int() takes it, an events file must not
    b"xid 1 -5",
    b"xid 1 99999999999999999999999999",
    b"xid",
    b"recover",
    b"xid 1 79 extra",
    b"\x00\x01\x02 binary",
    b"xid 1 \xff\xfe",  # not UTF-8
]


def test_bad_event_lines_are_skipped_and_the_monitor_lives_on(
    kubelet: KubeletSimulator,
    start_plugin: StartPlugin,
    sockdir: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="gpustack.plugin")
    events = sockdir / "events"
    events.write_text("")
    start_plugin(events_config(events))
    kubelet.wait_for_registration(GPU)
    kubelet.list_and_watch(GPU)
    with events.open("ab") as fh:
        fh.write(b"".join(line + b"\n" for line in BAD_LINES))
    append(events, "xid 3 79\n")
    kubelet.plugin(GPU).wait_for(lambda d: unhealthy(kubelet) == {U[3]})
    time.sleep(0.3)  # a dead monitor would now mark every GPU unhealthy
    assert unhealthy(kubelet) == {U[3]}
    append(events, "recover 3\n")
    kubelet.plugin(GPU).wait_for(lambda d: not unhealthy(kubelet))
    skipped = [r.getMessage() for r in caplog.records if "ignored" in r.getMessage()]
    assert len(skipped) == len(BAD_LINES), skipped
    assert "health monitor failed" not in caplog.text


@pytest.mark.parametrize("newline", [True, False], ids=["then-newline", "no-newline"])
def test_an_overlong_event_line_is_skipped_in_one_short_log_line(
    kubelet: KubeletSimulator,
    start_plugin: StartPlugin,
    sockdir: Path,
    caplog: pytest.LogCaptureFixture,
    newline: bool,
) -> None:
    """A 64 MiB line (a sparse file: no disk, no time) is dropped as it streams past, never
    held or echoed; the events after it still apply."""
    caplog.set_level(logging.INFO, logger="gpustack.plugin")
    events = sockdir / "events"
    events.write_text("xid 1 79\n")
    os.truncate(events, 64 << 20)
    start_plugin(events_config(events))
    kubelet.wait_for_registration(GPU)
    kubelet.plugin(GPU).wait_for(lambda d: unhealthy(kubelet) == {U[1]})
    wait_until(lambda: "longer than" in caplog.text, "the long line to be reported", 10)
    if newline:
        append(events, "\nxid 2 79\n")
        kubelet.plugin(GPU).wait_for(lambda d: unhealthy(kubelet) == {U[1], U[2]})
    time.sleep(0.3)
    messages = [r.getMessage() for r in caplog.records]
    long = [m for m in messages if "longer than" in m]
    assert len(long) == 1, long
    assert f"{simulated.MAX_EVENT_LINE} bytes" in long[0]
    assert max(len(m) for m in messages) < 1000
    assert unhealthy(kubelet) == ({U[1], U[2]} if newline else {U[1]})


# --- item 19: the socket folder replaced by a file ----------------------------------------------


def test_socket_folder_replaced_by_a_file_waits_and_serves_again(
    kubelet: KubeletSimulator, sockdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="gpustack.plugin")
    cfg = write(sockdir / "c.yaml", two_gpus())
    plugin = InProcessPlugin(kubelet.socket_dir, cfg, {})
    try:
        kubelet.wait_for_registration(GPU)
        kubelet.stop()
        shutil.rmtree(kubelet.socket_dir)
        Path(kubelet.socket_dir).write_text("not a folder\n")
        wait_until(lambda: "retrying" in caplog.text, "the plugin to report the folder")
        time.sleep(1.5)  # several polls and a retry: still alive, still one line
        assert plugin.thread.is_alive() and plugin.exit_code is None
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and "cannot serve nvidia.com/gpu" in errors[0], errors
        os.unlink(kubelet.socket_dir)
        restored = time.monotonic()
        kubelet.start()  # a kubelet re-creating its folder
        reg = kubelet.wait_for_registration(GPU, timeout=5, after=restored)
        assert reg.at - restored < 2.0
        assert len(kubelet.list_and_watch(GPU)) == 2
        assert kubelet.allocate(GPU, [U[0]]).container_responses[0].envs
    finally:
        assert plugin.stop() == 0
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize(
    "chunk", [1, 2, 7, simulated.MAX_EVENT_LINE, simulated.MAX_EVENT_LINE + 1, 1 << 20]
)
def test_event_lines_do_not_depend_on_how_the_file_is_read(chunk: int) -> None:
    limit = simulated.MAX_EVENT_LINE
    data = b"a\n" + b"x" * (limit + 1) + b"\nxid 1 79\n\n" + b"y" * limit + b"\nunfinished"
    reader = simulated.LineReader("events")
    lines: list[bytes] = []
    for start in range(0, len(data), chunk):
        lines += reader.feed(data[start : start + chunk])
    assert lines == [b"a", b"xid 1 79", b"", b"y" * limit]
    assert reader.offset == len(data)
    assert reader.feed(b"\n") == [b"unfinished"]


def test_docs_state_the_limits_the_code_enforces() -> None:
    readme = " ".join((REPO / "docs" / "concepts" / "device-plugin.md").read_text().split())
    for sentence in (
        f"at most {server.MAX_STREAMS} ListAndWatch streams per resource",
        f"{server.MAX_WORKERS - server.MAX_STREAMS} of the {server.MAX_WORKERS} per resource",
        f"at most {MAX_CONFIG_BYTES >> 20} MiB, nested at most {MAX_CONFIG_DEPTH}",
        f"longer than {simulated.MAX_EVENT_LINE} bytes is skipped",
        f"in {simulated.READ_CHUNK >> 10} KiB steps",
    ):
        assert sentence in readme, sentence
