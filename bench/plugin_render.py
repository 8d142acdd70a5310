"""The Argo CD plugin's ``generate`` as Argo CD's cmp-server runs it: a fresh client process per
call, in the Application's source folder, with its parameters in the environment.

Figures, each per call, wall seconds of the client process:

* cold: the first call, no renderer running (it starts one, which starts Python's imports,
  Node and cdk8s, and renders);
* warm: a warm renderer, inputs it has not seen (Argo CD unpacks every call into a fresh
  folder, so does this): every profile selects nodes of a new zone, so every DaemonSet's
  placement changes; and, apart, a new comment, a change of bytes that the synthesizer's reuse
  of components it rendered absorbs (a commit touching a profile without changing its cluster);
* cached: a warm renderer, inputs it rendered before (a hard refresh, an expired Argo CD cache);
* 8 concurrent: eight Applications' calls at once, unseen inputs (a commit touching eight) and
  then the same again (cached);
* fresh process: ``GPUSTACK_RENDERER=off``, what every call cost before the renderer.

Memory: the resident set of the renderer's process tree (Python and jsii's Node) at the end and
its peak (each process's high-water mark, summed). Each output is checked byte for byte against
``gpustack template`` of the same profile. Wall times on a shared machine move with the
neighbours: the load average is printed before and after.

Usage: ``.venv/bin/python bench/plugin_render.py [--runs N]`` (default 20 warm and cached calls,
5 cold calls, 5 rounds of 8 concurrent calls)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
GENERATE = [sys.executable, "-P", "-m", "gpustack.render_client"]
PROFILE = "h100-prod-east.yaml"
EIGHT = sorted(p.name for p in (REPO / "profiles").glob("*.yaml"))[:8]


def env_for(base: Path, profile: str, **more: str) -> dict[str, str]:
    """What Argo CD sets for one Application, the renderer's folder under ``base``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "GPUSTACK_"))}
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        GPUSTACK_RENDERER_DIR=str(base),
        ARGOCD_APP_PARAMETERS=json.dumps([{"name": "profile", "string": profile}]),
        ARGOCD_APP_SOURCE_PATH="profiles",
        ARGOCD_APP_NAME=f"gpustack-{Path(profile).stem}",
        **more,
    )
    return env


def call(cwd: Path, env: dict[str, str]) -> tuple[float, bytes]:
    """One ``generate``: its wall seconds and stdout; exits the bench on a failed call."""
    start = time.perf_counter()
    done = subprocess.run(GENERATE, cwd=cwd, env=env, capture_output=True)
    wall = time.perf_counter() - start
    if done.returncode != 0 or done.stderr:
        sys.exit(f"generate failed ({done.returncode}) in {cwd}:\n{done.stderr.decode()}")
    return wall, done.stdout


def template(cwd: Path, profile: str) -> bytes:
    """``gpustack template PROFILE`` in a fresh process: the bytes each call must print."""
    code = "from gpustack.cli import main; main()"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code, "template", profile], cwd=cwd, env=env, capture_output=True
    )
    if done.returncode != 0:
        sys.exit(f"gpustack template {profile} failed:\n{done.stderr.decode()}")
    return done.stdout


class Checkouts:
    """Fresh copies of ``profiles/`` (Argo CD unpacks each call's source anew). In a
    ``touched`` copy every profile selects nodes of a zone no earlier copy named, a change that
    reaches every DaemonSet's placement: no renderer has seen their bytes, nor their shapes
    (the synthesizer reuses the components of a shape it rendered, so a comment or a label
    alone renders faster than a real change); a ``commented`` copy only gains a comment."""

    def __init__(self, root: Path) -> None:
        self.root, self.count = root, 0

    def new(self, touched: bool, commented: bool = False) -> Path:
        self.count += 1
        folder = self.root / f"c{self.count}" / "profiles"
        shutil.copytree(REPO / "profiles", folder)
        for profile in folder.glob("*.yaml") if commented else ():
            with profile.open("a") as f:
                f.write(f"# checkout {self.count}\n")
        if touched:
            for profile in folder.glob("*.yaml"):
                doc = yaml.safe_load(profile.read_text())
                selector = doc.setdefault("cluster", {}).setdefault("nodeSelector", {})
                selector["topology.kubernetes.io/zone"] = f"zone-{self.count}"
                profile.write_text(yaml.safe_dump(doc, sort_keys=False))
        return folder


def renderers(base: Path) -> list[int]:
    """The renderers whose socket lies under ``base`` (not a child forked on its way to
    becoming Node, which shows its parent's command line for a moment)."""
    found: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit():
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if b"gpustack.renderer" in argv and any(a.startswith(bytes(base)) for a in argv):
                    found[int(entry.name)] = ppid
        except OSError:
            continue
    return [pid for pid, parent in found.items() if parent not in found]


def children(pid: int) -> list[int]:
    """The processes ``pid``'s threads started. The renderer starts and ends a thread per
    call: one that ends while it is listed is skipped, not a failure of the bench."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found.extend(int(c) for c in (task / "children").read_text().split())
        except FileNotFoundError:
            continue
    return found


def tree_memory(pid: int) -> tuple[int, int]:
    """Resident and peak resident bytes of ``pid`` and every process below it."""
    rss = peak = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        fields = {}
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            fields[key] = value
        rss += int(fields["VmRSS"].split()[0]) << 10
        peak += int(fields["VmHWM"].split()[0]) << 10
        todo.extend(children(p))
    return rss, peak


def stop(base: Path) -> None:
    for pid in renderers(base):
        os.kill(pid, signal.SIGKILL)


def parallel(folder: Path, base: Path, want: Callable[[str], bytes]) -> list[float]:
    """The eight Applications' calls at once; each one's wall seconds (what each must print is
    rendered first, so no ``gpustack template`` runs beside the timed calls)."""
    for profile in EIGHT:
        want(profile)

    def one(profile: str) -> float:
        wall, out = call(folder, env_for(base, profile))
        if out != want(profile):
            sys.exit(f"{profile}: the concurrent call printed other bytes than template")
        return wall

    with ThreadPoolExecutor(len(EIGHT)) as pool:
        return list(pool.map(one, EIGHT))


class Phase:
    """One figure: each call's wall seconds, and the CPU seconds all of them spent, in the
    clients and in the renderer's process tree (Python and Node) together."""

    def __init__(self, what: str) -> None:
        self.what, self.cpu = what, 0.0
        self.walls: list[float] = []

    def line(self) -> str:
        walls = self.walls
        return (
            f"{self.what:<40} p50 {statistics.median(walls):6.3f} s  max {max(walls):6.3f} s"
            f"  CPU/call {self.cpu / len(walls):6.3f} s  ({len(walls)} calls)"
        )


def children_cpu() -> float:
    """CPU seconds of this process's finished children (the clients; not the renderers they
    start, which outlive them)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tree_cpu(pid: int) -> float:
    """CPU seconds spent so far by ``pid`` and every live process below it."""
    ticks, todo = 0, [pid]
    while todo:
        p = todo.pop()
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
        todo.extend(children(p))
    return ticks / os.sysconf("SC_CLK_TCK")


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(runs: int, colds: int, rounds: int) -> None:
    print(f"{os.cpu_count()} CPUs, load average before: {load()}")
    floor = Phase("python3 -P -c pass (the floor)")
    fresh = Phase("fresh process (GPUSTACK_RENDERER=off)")
    cold = Phase("cold (first call starts the renderer)")
    warm = Phase("warm (every placement changed)")
    commented = Phase("warm (a comment changed)")
    cached = Phase("cached (inputs seen before)")
    concurrent = Phase("8 concurrent, unseen inputs, per call")
    concurrent_cached = Phase("8 concurrent, cached, per call")
    with tempfile.TemporaryDirectory(prefix="gpb-", dir="/tmp") as tmp:
        root = Path(tmp)
        checkouts = Checkouts(root / "src")
        expected: dict[tuple[Path, str], bytes] = {}

        def want_in(folder: Path) -> Callable[[str], bytes]:
            def want(profile: str) -> bytes:
                if (folder, profile) not in expected:
                    expected[folder, profile] = template(folder, profile)
                return expected[folder, profile]

            return want

        plain = checkouts.new(touched=False)
        want_in(plain)(PROFILE)  # bytecode and the jsii package cache are warm

        for _ in range(runs):
            before = children_cpu()
            start = time.perf_counter()
            subprocess.run([sys.executable, "-P", "-c", "pass"], check=True)
            floor.walls.append(time.perf_counter() - start)
            floor.cpu += children_cpu() - before
        for _ in range(colds):
            before = children_cpu()
            wall, out = call(plain, env_for(root / "off", PROFILE, GPUSTACK_RENDERER="off"))
            fresh.walls.append(wall)
            fresh.cpu += children_cpu() - before
        for i in range(colds):
            base = root / f"cold{i}"
            base.mkdir()
            before = children_cpu()
            wall, out = call(plain, env_for(base, PROFILE))
            if out != want_in(plain)(PROFILE):
                sys.exit("the cold call printed other bytes than template")
            cold.walls.append(wall)
            (pid,) = renderers(base)
            cold.cpu += children_cpu() - before + tree_cpu(pid)
            stop(base)

        base = root / "warm"
        base.mkdir()
        call(plain, env_for(base, PROFILE))
        (pid,) = renderers(base)

        def measured(phase: Phase, run: Callable[[], list[float]]) -> None:
            before = children_cpu() + tree_cpu(pid)
            phase.walls += run()
            phase.cpu += children_cpu() + tree_cpu(pid) - before

        def serial(folder: Path, want: bytes) -> list[float]:
            wall, out = call(folder, env_for(base, PROFILE))
            if out != want:
                sys.exit("a call printed other bytes than template")
            return [wall]

        plan = [(warm, True, False)] * runs + [(commented, False, True)] * runs
        for phase, touched, comment in plan + [(cached, False, False)] * runs:
            folder = checkouts.new(touched, comment)  # a fresh unpack: new bytes, or the same
            want = want_in(folder if touched or comment else plain)(PROFILE)  # before the call
            measured(phase, lambda f=folder, w=want: serial(f, w))  # type: ignore[misc]
        for _ in range(rounds):
            folder = checkouts.new(touched=True)
            for name in EIGHT:  # rendered by template before the timed calls
                want_in(folder)(name)
            for phase in (concurrent, concurrent_cached):
                measured(phase, lambda f=folder: parallel(f, base, want_in(f)))  # type: ignore[misc]
        assert renderers(base) == [pid], "the warm renderer served every call"
        rss, peak = tree_memory(pid)
        stop(base)

    for phase in (floor, fresh, cold, warm, commented, cached, concurrent, concurrent_cached):
        print(phase.line())
    print(f"renderer process tree (Python + Node): {rss >> 20} MiB resident, {peak >> 20} MiB peak")
    print(f"load average after: {load()}")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Per-call time of the Argo CD plugin's generate.")
    parser.add_argument("--runs", type=int, default=20, help="warm and cached calls (default 20)")
    parser.add_argument("--cold", type=int, default=5, help="cold calls (default 5)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of 8 concurrent (default 5)")
    args = parser.parse_args(argv)
    if min(args.runs, args.cold, args.rounds) < 1:
        parser.error("--runs, --cold and --rounds must each be at least 1")
    return args


if __name__ == "__main__":
    args = parse(sys.argv[1:])
    main(args.runs, args.cold, args.rounds)
