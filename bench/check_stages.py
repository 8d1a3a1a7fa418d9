"""Where a cold `ol check` spends its time: a profile by stage, against its floor.

Run from the repository's root::

    python bench/check_stages.py [--workspace DIR ...] [--sandbox auto|bwrap|uid|none]

For each workspace (by default both bundled examples), one cold ``ol check --fresh`` runs
in this process with the cache off, and every run it makes is timed from outside the
engine, by kind:

- start: from the command's start to the first run's (parsing, reading the workspace);
  then, inside the first runs, choosing the sandbox (probing it) and starting the worker
  (shown apart, and counted in those runs' time too);
- the import probe of the student's tree;
- the course tests on the student's tree, with each test's own time;
- the student's tests on each correct tree, then the placebo, the mutants, and the correct
  trees again (the control runs).

A run's wall time is from its call to its result; runs of one stage overlap (the engine
runs as many at once as there are cores), so a stage's share is its summed run time over
the summed run time of the whole check. A run's own time is what pytest measured inside
it: the sum of its tests' durations. The floor is the sum of every run's own time divided
by the cores: the check could not end sooner with the same tests on these cores. The
report ends with the check's wall time over that floor, the machine's busy CPU over the
check (every process's, from /proc/stat: on a quiet machine, the check's), and the machine's
load averages, since a shared machine slows every figure alike. Absolute seconds depend on
the machine; the shares and the ratios are what to compare before and after a change.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ol  # noqa: E402 - after the path is set
from harness.chapter import find  # noqa: E402
from harness.grade.mutation import placebo  # noqa: E402
from harness.run.engine import Engine  # noqa: E402
from harness.run.process import Worker  # noqa: E402

CHAPTER = find("ds.07")


@dataclass
class Profile:
    """What one check's runs took, by kind, as the engine was called."""

    started: float = field(default_factory=time.perf_counter)
    first_run: float | None = None
    wall: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    own: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    runs: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    course_tests: dict[str, float] = field(default_factory=dict)
    setup: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    spans: list[tuple[float, float]] = field(default_factory=list)
    seen_correct: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self) -> float:
        now = time.perf_counter()
        with self.lock:
            if self.first_run is None:
                self.first_run = now
        return now

    def add(self, kind: str, began: float, own: float) -> None:
        with self.lock:
            self.spans.append((began, time.perf_counter()))
            self.wall[kind] += time.perf_counter() - began
            self.own[kind] += own
            self.runs[kind] += 1


def kind_of(profile: Profile, suite, implementation: str, trees: dict[str, str],
            stub: str) -> str:
    if CHAPTER.course_test_file.resolve() in {Path(path).resolve() for path in suite.files}:
        return "course tests on the student's tree"
    if implementation == stub:
        return "placebo"
    where = trees.get(implementation)
    if where is None:
        return "student's tests on the mutants"
    with profile.lock:
        again = where in profile.seen_correct
        profile.seen_correct.add(where)
    return ("correct trees again (control)" if again
            else "student's tests on the correct trees")


def profiled(workspace: str, mode: str) -> tuple[Profile, float, int, float]:
    """One cold check of ``workspace``: (its profile, its wall seconds, its exit code, the
    machine's busy CPU seconds over it)."""
    trees = {path.read_text(encoding="utf-8"): where for where, path in CHAPTER.correct_trees}
    stub = placebo(CHAPTER.reference_source(), CHAPTER)
    profile = Profile()
    run_now, probe_now = Engine.run_now, Engine.probe_now
    current, start = Engine.current, Worker.start

    def timed_current(self):
        began = time.perf_counter()
        made = self.runner is None
        try:
            return current(self)
        finally:
            if made:
                profile.setup["choosing the sandbox"] += time.perf_counter() - began

    def timed_start(self):
        began = time.perf_counter()
        starts = self.channel is None or self.lost == self.generation
        try:
            return start(self)
        finally:
            if starts:
                profile.setup["starting the worker"] += time.perf_counter() - began

    def timed_run(self, suite, implementation, **kwargs):
        began = profile.begin()
        result = run_now(self, suite, implementation, **kwargs)
        kind = kind_of(profile, suite, implementation, trees, stub)
        profile.add(kind, began, sum(record.seconds for record in result.records))
        if kind.startswith("course"):
            profile.course_tests.update((record.name, record.seconds)
                                        for record in result.records)
        return result

    def timed_probe(self, implementation, *more):
        began = profile.begin()
        try:
            return probe_now(self, implementation, *more)
        finally:
            profile.add("import probe of the student's tree", began, 0.0)

    Engine.run_now, Engine.probe_now = timed_run, timed_probe
    Engine.current, Worker.start = timed_current, timed_start
    os.environ["OL_CACHE"] = "off"
    cpu = busy_cpu()
    try:
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            code = ol.main(["check", "ds.07", "--workspace", workspace, "--fresh",
                            "--sandbox", mode])
    finally:
        Engine.run_now, Engine.probe_now = run_now, probe_now
        Engine.current, Worker.start = current, start
    return profile, time.perf_counter() - profile.started, code, busy_cpu() - cpu


def busy_cpu() -> float:
    """The machine's busy CPU so far, in core-seconds (/proc/stat: every state but idle and
    iowait), or nan where there is no /proc/stat."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return float("nan")
    ticks = [int(field) for field in fields]
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def covered(spans: list[tuple[float, float]]) -> float:
    """Seconds during which at least one run was going."""
    total, reach = 0.0, float("-inf")
    for began, ended in sorted(spans):
        if ended > reach:
            total += ended - max(began, reach)
            reach = ended
    return total


def report(name: str, profile: Profile, wall: float, code: int, cpu: float) -> None:
    cores = os.cpu_count() or 1
    busy = sum(profile.wall.values())
    floor = sum(profile.own.values()) / cores
    start = (profile.first_run or profile.started) - profile.started
    print(f"{name}: exit code {code}, {wall:.1f} s of wall time on {cores} cores")
    print(f"  {'stage':<40} {'runs':>5} {'run time':>9} {'share':>6} {'own time':>9}")
    print(f"  {'start (before the first run)':<40} {'':>5} {start:8.1f}s {'':>6} {'':>9}")
    for what, seconds in profile.setup.items():
        print(f"  {'  ' + what + ' (in the first runs)':<40} {'':>5} {seconds:8.1f}s")
    for kind in sorted(profile.wall, key=profile.wall.get, reverse=True):
        print(f"  {kind:<40} {profile.runs[kind]:>5} {profile.wall[kind]:8.1f}s "
              f"{profile.wall[kind] / busy:6.1%} {profile.own[kind]:8.1f}s")
    print("  course tests by test (own time):")
    for test, seconds in sorted(profile.course_tests.items(), key=lambda item: -item[1]):
        print(f"    {test:<52} {seconds:6.2f}s")
    idle = wall - covered(profile.spans)
    print(f"  no run going: {idle:.1f} s of the {wall:.1f} s (before, between and after runs)")
    print(f"  floor: {sum(profile.own.values()):.1f} s of the tests' own time / {cores} cores "
          f"= {floor:.1f} s; the check took {wall / floor:.2f}x its floor")
    print(f"  CPU: the machine was busy {cpu:.1f} core-seconds over the check's {wall:.1f} s "
          f"({cpu / wall:.2f} cores on average; a quiet machine's own share is near 0)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", action="append",
                        help="a workspace to check (repeatable); default: both examples")
    parser.add_argument("--sandbox", default="auto", help="the sandbox mode (default auto)")
    args = parser.parse_args()
    workspaces = args.workspace or [str(ROOT / "examples" / name)
                                    for name in ("passing", "failing")]
    load = os.getloadavg()
    print(f"machine load before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (1, 5, 15 min)")
    for workspace in workspaces:
        report(workspace, *profiled(workspace, args.sandbox))
    load = os.getloadavg()
    print(f"machine load after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (1, 5, 15 min)")


if __name__ == "__main__":
    main()
