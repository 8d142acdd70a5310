"""Benchmark the device plugin: Allocate latency, re-registration time, resident memory.

Starts ``gpustack-device-plugin`` as a real process (simulated backend, 8 × H100, time-slicing
with 10 replicas → 80 advertised devices) against the in-process test kubelet and prints:

    allocate_p50_ms / allocate_p99_ms   sequential Allocate round trips over a unix socket
    allocate_concurrent_per_s           throughput with 16 concurrent callers
    reregister_ms_max                   kubelet restart → plugin registered again (worst of 5)
    reregister_5_resources_ms_max       the same for a MIG mixed node with 5 resources (all five)
    plugin_rss_mib                      VmRSS of the plugin process after the run
    idle_streams_<N>_allocate_p50_ms /  Allocate round trips while N more ListAndWatch streams
      _p99_ms / _timeouts               are open and never read (a hostile peer), 2 s deadline
    events_line_<M>mib_rss_peak_mib     VmHWM of a plugin whose simulated events file starts
                                        with an M MiB line (a sparse file), once it has read past
    reload_storm_allocate_p50_ms /      Allocate round trips while the plugin gets SIGHUP 100
      _p99_ms / _failures               times a second for 3 s (coalesced reloads that keep the
                                        servers serving: issue #21)
    hostile_<N>_allocate_p50_ms /       Allocate round trips while N clients send 4 MB
      _p99_ms / _failures               GetPreferredAllocation requests back to back on their
    hostile_<N>_plugin_cpu_ms_per_request own connections, and the plugin CPU each costs
                                        (issue #33: 100 s each, Allocate p99 978 ms with six)

Usage: .venv/bin/python bench/plugin_allocate.py [--calls 2000] [--idle-streams 0,3,15,32]
       [--events-line-mib 400] [--hostile-clients 6] [--only-hostile]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import yaml

from gpustack.plugin.server import CHANNEL_OPTIONS
from gpustack.plugin.testkubelet import KubeletSimulator
from gpustack.plugin.v1beta1 import api_pb2, api_pb2_grpc

GPU = "nvidia.com/gpu"
CONFIG = {
    "sharing": {"timeSlicing": {"resources": [{"name": GPU, "replicas": 10}]}},
    "gpustack": {
        "backend": "simulated",
        "simulated": {
            "gpus": [{"index": i, "numaNode": i // 4, "nvlinkPeers": [i ^ 1]} for i in range(8)]
        },
    },
}


#: 2 GPUs in MIG mixed mode plus 2 whole GPUs: nvidia.com/gpu and four mig-* resources.
MIG_CONFIG = {
    "flags": {"migStrategy": "mixed"},
    "gpustack": {
        "backend": "simulated",
        "simulated": {
            "gpus": [
                {"index": 0, "mig": {"enabled": True, "devices": {"1g.10gb": 3, "2g.20gb": 2}}},
                {"index": 1, "mig": {"enabled": True, "devices": {"3g.40gb": 1, "4g.40gb": 1}}},
                {"index": 2},
                {"index": 3},
            ]
        },
    },
}
MIG_RESOURCES = [
    GPU,
    *(f"nvidia.com/mig-{p}" for p in ("1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb")),
]


def reregister_all_ms(script: Path, tmp: Path, rounds: int = 5) -> float:
    """Worst time from a kubelet restart until every resource of MIG_CONFIG registered again."""
    config = tmp / "mig.yaml"
    config.write_text(yaml.safe_dump(MIG_CONFIG))
    socket_dir = tmp / "mig"
    proc = subprocess.Popen(
        [str(script), "--config-file", str(config), "--socket-dir", str(socket_dir)],
        stderr=subprocess.DEVNULL,
    )
    try:
        with KubeletSimulator(str(socket_dir)) as kubelet:
            for name in MIG_RESOURCES:
                kubelet.wait_for_registration(name, timeout=20)
            worst = 0.0
            for _ in range(rounds):
                restarted = kubelet.restart()
                last = max(
                    kubelet.wait_for_registration(name, timeout=10, after=restarted).at
                    for name in MIG_RESOURCES
                )
                worst = max(worst, (last - restarted) * 1000)
            return worst
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def allocate_with_idle_streams(
    kubelet: KubeletSimulator, socket_path: Path, ids: list[str], idle: int, calls: int
) -> tuple[list[float], int]:
    """Allocate latencies (ms) with ``idle`` extra ListAndWatch streams open, and how many
    calls missed their 2 s deadline (it stops after 3 misses: they would all miss)."""
    with grpc.insecure_channel(f"unix:{socket_path}", options=CHANNEL_OPTIONS) as channel:
        stub: Any = api_pb2_grpc.DevicePluginStub(channel)  # type: ignore[no-untyped-call]
        streams = [stub.ListAndWatch(api_pb2.Empty(), timeout=120) for _ in range(idle)]
        time.sleep(0.5)  # let the server take them up; they are never read
        latencies: list[float] = []
        timeouts = 0
        try:
            for i in range(calls):
                start = time.perf_counter()
                try:
                    kubelet.allocate(GPU, [ids[i % len(ids)]], timeout=2)
                except grpc.RpcError as exc:
                    if exc.code() != grpc.StatusCode.DEADLINE_EXCEEDED:  # type: ignore[attr-defined]
                        raise
                    timeouts += 1
                    if timeouts == 3:
                        break
                    continue
                latencies.append((time.perf_counter() - start) * 1000)
        finally:
            for stream in streams:
                stream.cancel()
    return latencies, timeouts


def events_line_rss_peak_mib(script: Path, tmp: Path, line_mib: int) -> float:
    """Peak RSS of a plugin that reads an events file starting with a ``line_mib`` MiB line."""
    events = tmp / "events"
    events.write_bytes(b"")
    os.truncate(events, line_mib << 20)  # sparse: NUL bytes that cost no disk
    with events.open("ab") as fh:
        fh.write(b"\nxid 0 79\n")
    config = tmp / "events.yaml"
    doc: dict[str, Any] = {
        "gpustack": {
            "backend": "simulated",
            "simulated": {"gpus": [{"index": 0}, {"index": 1}], "eventsFile": str(events)},
        }
    }
    config.write_text(yaml.safe_dump(doc))
    socket_dir = tmp / "events-dp"
    proc = subprocess.Popen(
        [str(script), "--config-file", str(config), "--socket-dir", str(socket_dir)],
        stderr=subprocess.DEVNULL,
    )
    try:
        with KubeletSimulator(str(socket_dir)) as kubelet:
            kubelet.wait_for_registration(GPU, timeout=20)
            # The event after the long line applied: the plugin has read past it.
            kubelet.plugin(GPU).wait_for(
                lambda devices: any(d.health == "Unhealthy" for d in devices), timeout=120
            )
            return proc_status_mib(proc.pid, "VmHWM")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        events.unlink()


def proc_status_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for pid {pid}")


def rss_mib(pid: int) -> float:
    return proc_status_mib(pid, "VmRSS")


#: The reload storm: signals per second, and how long it lasts.
STORM_PER_S = 100
STORM_S = 3.0


def allocate_in_reload_storm(
    kubelet: KubeletSimulator, pid: int, ids: list[str]
) -> tuple[list[float], int]:
    """Allocate latencies (ms) and failed calls while ``pid`` gets SIGHUP at STORM_PER_S."""
    stop = threading.Event()

    def storm() -> None:
        period = 1 / STORM_PER_S
        next_at = time.monotonic()
        while not stop.is_set():
            os.kill(pid, signal.SIGHUP)
            next_at += period
            time.sleep(max(0.0, next_at - time.monotonic()))

    sender = threading.Thread(target=storm)
    sender.start()
    latencies: list[float] = []
    failures = 0
    deadline = time.monotonic() + STORM_S
    try:
        while time.monotonic() < deadline:
            start = time.perf_counter()
            try:
                kubelet.allocate(GPU, [ids[0]], timeout=2)
                latencies.append((time.perf_counter() - start) * 1000)
            except grpc.RpcError:
                failures += 1
            time.sleep(0.002)  # the kubelet allocates per pod, not in a tight loop
    finally:
        stop.set()
        sender.join()
    return latencies, failures


#: The size of a hostile GetPreferredAllocation request (below gRPC's 4 MiB receive limit).
HOSTILE_BYTES = 4_000_000


def hostile_request(ids: list[str]) -> Any:
    """A 4 MB request of advertised IDs that cost the plugin time quadratic in its length
    before issue #33: ``must_include`` names the last ``available`` entry, over and over."""
    count = HOSTILE_BYTES // (2 * (len(ids[0]) + 2))
    return api_pb2.PreferredAllocationRequest(
        container_requests=[
            api_pb2.ContainerPreferredAllocationRequest(
                available_deviceIDs=[ids[0]] * count + [ids[-1]],
                must_include_deviceIDs=[ids[-1]] * count,
                allocation_size=2,
            )
        ]
    )


def cpu_s(pid: int) -> float:
    """User and system CPU seconds of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def hostile_client(socket_path: str, ids: list[str], seconds: float) -> int:
    """Send 4 MB preferred allocation requests back to back for ``seconds``; print how many
    were answered (any answer: refused is what a hostile client should get)."""
    request = hostile_request(ids)
    options = (*CHANNEL_OPTIONS, ("grpc.max_send_message_length", 8 << 20))
    answered = 0
    deadline = time.monotonic() + seconds
    with grpc.insecure_channel(f"unix:{socket_path}", options=options) as channel:
        stub: Any = api_pb2_grpc.DevicePluginStub(channel)  # type: ignore[no-untyped-call]
        while time.monotonic() < deadline:
            with contextlib.suppress(grpc.RpcError):
                stub.GetPreferredAllocation(request, timeout=120)
            answered += 1
    print(answered)
    return 0


def allocate_with_hostile_clients(
    kubelet: KubeletSimulator, socket_path: Path, pid: int, ids: list[str], clients: int, calls: int
) -> tuple[list[float], int, int, float]:
    """Allocate latencies (ms) and failures while ``clients`` processes (each its own
    connection and interpreter, as separate pods would be) send 4 MB preferred allocation
    requests back to back; and how many of those were answered, and the plugin's CPU seconds
    over the run."""
    seconds = 3 + calls * 0.004
    cpu_before = cpu_s(pid)
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--hostile-client", str(socket_path), ",".join(ids)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "HOSTILE_SECONDS": str(seconds)},
        )
        for _ in range(clients)
    ]
    time.sleep(1.0)  # the clients are sending
    latencies: list[float] = []
    failures = 0
    try:
        for i in range(calls):
            start = time.perf_counter()
            try:
                kubelet.allocate(GPU, [ids[i % len(ids)]], timeout=5)
                latencies.append((time.perf_counter() - start) * 1000)
            except grpc.RpcError:
                failures += 1
            time.sleep(0.002)  # the kubelet allocates per pod, not in a tight loop
    finally:
        answered = sum(int(proc.communicate(timeout=120)[0] or 0) for proc in procs)
    return latencies, failures, answered, cpu_s(pid) - cpu_before


def percentile(samples: list[float], pct: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]


def print_hostile(
    clients: int, latencies: list[float], failures: int, answered: int, cpu: float
) -> None:
    n = f"hostile_{clients}"
    print(f"{n}_allocate_calls {len(latencies) + failures}")
    print(f"{n}_allocate_p50_ms {statistics.median(latencies):.3f}")
    print(f"{n}_allocate_p99_ms {percentile(latencies, 99):.3f}")
    print(f"{n}_allocate_failures {failures}/{len(latencies) + failures}")
    print(f"{n}_requests_answered {answered}")
    per = f"{cpu * 1000 / answered:.1f}" if answered else "-"
    print(f"{n}_plugin_cpu_ms_per_request {per}")


def main() -> int:
    if sys.argv[1:2] == ["--hostile-client"]:
        seconds = float(os.environ.get("HOSTILE_SECONDS", "5"))
        return hostile_client(sys.argv[2], sys.argv[3].split(","), seconds)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--idle-streams", default="0,3,15,32", help="comma list of N")
    parser.add_argument("--events-line-mib", type=int, default=400, help="0: skip")
    parser.add_argument("--hostile-clients", type=int, default=6, help="0: skip")
    parser.add_argument(
        "--only-hostile", action="store_true", help="only the hostile clients' figures"
    )
    args = parser.parse_args()
    idle_counts = [int(n) for n in args.idle_streams.split(",") if n.strip()]
    tmp = Path(tempfile.mkdtemp(prefix="gsb", dir="/tmp"))
    config = tmp / "config.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    socket_dir = tmp / "dp"
    script = Path(sys.executable).parent / "gpustack-device-plugin"
    proc = subprocess.Popen(
        [str(script), "--config-file", str(config), "--socket-dir", str(socket_dir)],
        stderr=subprocess.DEVNULL,
    )
    try:
        with KubeletSimulator(str(socket_dir)) as kubelet:
            kubelet.wait_for_registration(GPU, timeout=20)
            ids = [d.ID for d in kubelet.list_and_watch(GPU)]
            if args.hostile_clients or args.only_hostile:
                hostile = allocate_with_hostile_clients(
                    kubelet,
                    socket_dir / "nvidia-gpu.sock",
                    proc.pid,
                    ids,
                    args.hostile_clients,
                    min(args.calls, 1000),
                )
                print_hostile(args.hostile_clients, *hostile)
            if args.only_hostile:
                return 0
            rss_idle = rss_mib(proc.pid)
            for i in range(50):  # warm-up
                kubelet.allocate(GPU, [ids[i % len(ids)]])
            latencies = []
            for i in range(args.calls):
                request = [ids[i % len(ids)], ids[(i * 7 + 3) % len(ids)]]
                start = time.perf_counter()
                kubelet.allocate(GPU, request)
                latencies.append((time.perf_counter() - start) * 1000)

            def one(i: int) -> None:
                kubelet.allocate(GPU, [ids[i % len(ids)]], timeout=30)

            start = time.perf_counter()
            with ThreadPoolExecutor(max_workers=16) as pool:
                list(pool.map(one, range(args.calls)))
            throughput = args.calls / (time.perf_counter() - start)

            reregister = []
            for _ in range(5):
                restarted = kubelet.restart()
                reg = kubelet.wait_for_registration(GPU, timeout=10, after=restarted)
                reregister.append((reg.at - restarted) * 1000)
            rss_after = rss_mib(proc.pid)
            idle_results = {
                n: allocate_with_idle_streams(
                    kubelet, socket_dir / "nvidia-gpu.sock", ids, n, min(args.calls, 500)
                )
                for n in idle_counts
            }
            storm_latencies, storm_failures = allocate_in_reload_storm(kubelet, proc.pid, ids)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    try:
        reregister_all = reregister_all_ms(script, tmp)
        events_peak = (
            events_line_rss_peak_mib(script, tmp, args.events_line_mib)
            if args.events_line_mib
            else None
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"devices_advertised        {len(ids)}")
    print(f"allocate_calls            {args.calls}")
    print(f"allocate_p50_ms           {statistics.median(latencies):.3f}")
    print(f"allocate_p99_ms           {percentile(latencies, 99):.3f}")
    print(f"allocate_max_ms           {max(latencies):.3f}")
    print(f"allocate_concurrent_per_s {throughput:.0f}")
    print(f"reregister_ms_max         {max(reregister):.1f}")
    print(f"reregister_5_resources_ms_max {reregister_all:.1f}")
    print(f"plugin_rss_mib_idle       {rss_idle:.1f}")
    print(f"plugin_rss_mib            {rss_after:.1f}")
    for n, (samples, timeouts) in idle_results.items():
        p50 = f"{statistics.median(samples):.3f}" if samples else "-"
        p99 = f"{percentile(samples, 99):.3f}" if samples else "-"
        print(f"idle_streams_{n}_allocate_p50_ms {p50}")
        print(f"idle_streams_{n}_allocate_p99_ms {p99}")
        print(f"idle_streams_{n}_allocate_timeouts {timeouts}/{len(samples) + timeouts}")
    if events_peak is not None:
        print(f"events_line_{args.events_line_mib}mib_rss_peak_mib {events_peak:.1f}")
    print(f"reload_storm_allocate_p50_ms {statistics.median(storm_latencies):.3f}")
    print(f"reload_storm_allocate_p99_ms {percentile(storm_latencies, 99):.3f}")
    print(
        f"reload_storm_allocate_failures {storm_failures}/{len(storm_latencies) + storm_failures}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
