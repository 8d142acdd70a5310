"""The Argo CD plugin's ``generate`` as Argo CD's cmp-server runs it: a fresh client process per
call, in the Application's source folder, with its parameters in the environment.

Figures, each per call, wall seconds of the client process:

* cold: the first call, no renderer running (it starts one, which starts Python's imports,
  Node and cdk8s, and renders);
* warm: a warm renderer, inputs it has not seen (each call's profile carries a new comment, as
  after a commit that touched it; Argo CD unpacks every call into a fresh folder, so does this);
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
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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
    """Fresh copies of ``profiles/`` (Argo CD unpacks each call's source anew); ``touched``
    copies carry a new comment in each profile, so no renderer has seen their bytes."""

    def __init__(self, root: Path) -> None:
        self.root, self.count = root, 0

    def new(self, touched: bool) -> Path:
        self.count += 1
        folder = self.root / f"c{self.count}" / "profiles"
        shutil.copytree(REPO / "profiles", folder)
        if touched:
            for profile in folder.glob("*.yaml"):
                with profile.open("a") as f:
                    f.write(f"# bench checkout {self.count}\n")
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
        for task in Path(f"/proc/{p}/task").iterdir():
            todo.extend(int(c) for c in (task / "children").read_text().split())
    return rss, peak


def stop(base: Path) -> None:
    for pid in renderers(base):
        os.kill(pid, signal.SIGKILL)


def parallel(folder: Path, base: Path, want: Callable[[str], bytes]) -> list[float]:
    """The eight Applications' calls at once; each one's wall seconds."""

    def one(profile: str) -> float:
        wall, out = call(folder, env_for(base, profile))
        if out != want(profile):
            sys.exit(f"{profile}: the concurrent call printed other bytes than template")
        return wall

    with ThreadPoolExecutor(len(EIGHT)) as pool:
        return list(pool.map(one, EIGHT))


def line(what: str, walls: Sequence[float]) -> str:
    return (
        f"{what:<40} p50 {statistics.median(walls):6.3f} s  max {max(walls):6.3f} s"
        f"  ({len(walls)} calls)"
    )


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(runs: int, colds: int, rounds: int) -> None:
    print(f"{os.cpu_count()} CPUs, load average before: {load()}")
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
        template(plain, PROFILE)  # bytecode and the jsii package cache are warm

        fresh = []
        for _ in range(colds):
            wall, out = call(plain, env_for(root / "off", PROFILE, GPUSTACK_RENDERER="off"))
            fresh.append(wall)
        cold = []
        for i in range(colds):
            base = root / f"cold{i}"
            base.mkdir()
            wall, out = call(plain, env_for(base, PROFILE))
            if out != want_in(plain)(PROFILE):
                sys.exit("the cold call printed other bytes than template")
            cold.append(wall)
            stop(base)

        base = root / "warm"
        base.mkdir()
        call(plain, env_for(base, PROFILE))
        warm = []
        for _ in range(runs):
            folder = checkouts.new(touched=True)
            wall, out = call(folder, env_for(base, PROFILE))
            if out != want_in(folder)(PROFILE):
                sys.exit("a warm call printed other bytes than template")
            warm.append(wall)
        cached = []
        for _ in range(runs):
            folder = checkouts.new(touched=False)  # a fresh unpack of the same bytes
            wall, out = call(folder, env_for(base, PROFILE))
            if out != want_in(plain)(PROFILE):
                sys.exit("a cached call printed other bytes than template")
            cached.append(wall)

        concurrent, concurrent_cached = [], []
        for _ in range(rounds):
            folder = checkouts.new(touched=True)
            concurrent += parallel(folder, base, want_in(folder))
            concurrent_cached += parallel(folder, base, want_in(folder))
        (pid,) = renderers(base)
        rss, peak = tree_memory(pid)
        stop(base)

    print(line("fresh process (GPUSTACK_RENDERER=off)", fresh))
    print(line("cold (first call starts the renderer)", cold))
    print(line("warm (unseen inputs)", warm))
    print(line("cached (inputs seen before)", cached))
    print(line("8 concurrent, unseen inputs, per call", concurrent))
    print(line("8 concurrent, cached, per call", concurrent_cached))
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
