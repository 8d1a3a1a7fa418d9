"""Run a pytest suite against one implementation of a contract's module and say what happened.

An ``Engine`` is where one command's runs happen: the sandbox, chosen once, and one warm
worker that forks every run (or a fresh worker per run, in strict isolation). A command
makes one, passes it to whatever runs code, and closes it when it ends; nothing of it is
kept at module level. The run folder is laid out by run/layout.py, the run is started and
limited by run/process.py, and its records are judged by run/judge.py.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from harness.errors import OlFault
from harness.run import intake, sandbox
from harness.run.cache import RunCache
from harness.run.judge import RunResult, Status, judge
from harness.run.layout import Contract, Suite, lay_out, probe_side
from harness.run.process import RUN_CAPS, Cancelled, Ended, Runner, WorkerLost

PROBE_LIMIT = 30.0  # seconds importing a tree may take

T = TypeVar("T")


class Engine:
    """The runs of one command: a sandbox chosen once, a worker, closed at the end.

    ``sandbox_mode`` is auto, bwrap, uid or none; ``fresh``
    starts a new worker for every run (slower; for comparison). The sandbox and the worker
    are made at the first run, so a command that runs nothing starts nothing.
    """

    def __init__(self, sandbox_mode: str = "auto", fresh: bool = False,
                 cache: RunCache | None = None, sandbox_uid: int = sandbox.NOBODY,
                 chosen: sandbox.Sandbox | None = None) -> None:
        self.sandbox_mode = sandbox_mode
        self.sandbox_uid = sandbox_uid  # the user submission code runs as in the uid sandbox
        self.chosen = chosen  # the sandbox, once chosen (by this engine or the one it copies)
        self.fresh = fresh
        self.cache = cache  # results by content: a run whose inputs are unchanged is not run
        self.lock = threading.Lock()
        self.runner: Runner | None = None

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @property
    def isolation(self) -> str:
        """"strict" (a fresh worker per run) or "fast" (one warm worker forks every run)."""
        return "strict" if self.fresh else "fast"

    @property
    def sandbox(self) -> sandbox.Sandbox:
        """The sandbox runs use here (choosing it, when no run has yet)."""
        return self.current().sandbox

    def current(self) -> Runner:
        with self.lock:
            if self.runner is None:
                if self.chosen is None:
                    self.chosen = sandbox.choose(self.sandbox_mode, self.sandbox_uid)
                self.runner = Runner(self.chosen, fresh=self.fresh)
            return self.runner

    def close_to_runs(self, private: Sequence[Path]) -> None:
        """OlError, naming the path and how to close it, where this engine's runs could read
        one of ``private`` (ol's own files, the grader's beside a submission, classmates'
        work) or the kept results: as the sandbox's policy says (see refuse_readable)."""
        kept = [self.cache.folder] if self.cache is not None else []
        self.sandbox.refuse_readable([*private, *kept])

    def sibling(self) -> Engine:
        """An engine like this one (its sandbox, as chosen once, its isolation and cache)
        with a worker of its own."""
        return Engine(self.sandbox_mode, self.fresh, self.cache, self.sandbox_uid, self.sandbox)

    def close(self) -> None:
        """The worker stops and the run folders go."""
        with self.lock:
            if self.runner is not None:
                self.runner.close()
                self.runner = None

    def run(self, suite: Suite, implementation: str, *, timeout: float,
            test_limit: float = 0.0, expected: Iterable[str] | None = None,
            cancel: threading.Event | None = None, trusted: bool = False,
            again: bool = False, on_test: Callable[[str, str], None] | None = None,
            ) -> RunResult:
        """Run ``suite`` with ``implementation`` (a module's text) as its contract's module.

        ``trusted`` says the implementation is ours (the reference, a mutant, the stub), not
        a submission's. The whole run is killed past ``timeout`` seconds; a single test past
        ``test_limit`` (when positive) fails with TestTimeout and the others go on. Raises
        Cancelled, after killing the run, when ``cancel`` is set while it runs. With a
        cache, a run whose every input is unchanged is served from it; a run that timed out
        is kept only when it is ``again`` the same run, which timed out just before.
        ``on_test`` sees (test id, outcome) as each test of a run that runs ends (for a
        display only: a run's own records are judged at its end).
        """
        if self.cache is None:
            return self.run_now(suite, implementation, timeout=timeout, test_limit=test_limit,
                                expected=expected, cancel=cancel, trusted=trusted,
                                on_test=on_test)
        key = self.cache.key(suite, implementation, (timeout, test_limit), expected, trusted,
                             self.sandbox.mode)
        kept = self.cache.get(key)
        if kept is not None:
            return kept
        result = self.run_now(suite, implementation, timeout=timeout, test_limit=test_limit,
                              expected=expected, cancel=cancel, trusted=trusted,
                              on_test=on_test)
        self.cache.put(key, result, timeouts=again)
        return result

    def run_now(self, suite: Suite, implementation: str, *, timeout: float,
                test_limit: float = 0.0, expected: Iterable[str] | None = None,
                cancel: threading.Event | None = None, trusted: bool = False,
                on_test: Callable[[str, str], None] | None = None) -> RunResult:
        """``run``, always running (once more, from a fresh folder, when the worker died)."""
        return again_once(lambda: self.run_once(
            suite, implementation, timeout=timeout, test_limit=test_limit, expected=expected,
            cancel=cancel, trusted=trusted, on_test=on_test))

    def run_once(self, suite: Suite, implementation: str, *, timeout: float,
                 test_limit: float, expected: Iterable[str] | None,
                 cancel: threading.Event | None, trusted: bool,
                 on_test: Callable[[str, str], None] | None) -> RunResult:
        runner = self.current()
        run = runner.new_folder()
        try:
            test, tree = lay_out(run, suite, implementation, (timeout, test_limit), trusted)
            runner.hand_over(run / "test", untrusted=not suite.ours)
            if tree is not None:
                runner.hand_over(run / "tree", untrusted=not trusted)
            started = time.perf_counter()
            ended = runner.run(test, tree, timeout, cancel,
                               None if on_test is None else tests_of(on_test))
            seconds = time.perf_counter() - started
            coverage = None
            if suite.measure and suite.proxy is not None:
                coverage = intake.coverage_file(run / "tree" / "coverage.json")
            output = ended.output + "".join(f"\nol: {said}\n" for said in capped(ended))
            if ended.returncode is None:
                return RunResult(Status.TIMEOUT, seconds=seconds, output=output,
                                 detail=f"still running after {timeout:.0f} s: stopped")
            if ended.overflow:
                return RunResult(Status.CRASH, seconds=seconds, output=output,
                                 detail="the run wrote more records than any suite needs")
            result = judge(ended.records, ended.returncode, expected, seconds, output)
            return result if coverage is None else dataclasses.replace(result, coverage=coverage)
        finally:
            runner.drop(run)

    def probe_import(self, implementation: str, contract: Contract,
                     beside: tuple[tuple[str, str], ...] = ()) -> str | None:
        """Import ``implementation`` as the contract's module, with the modules ``beside``
        it, in a confined process: None, or why not (kept in the cache, when there is
        one)."""
        if self.cache is None:
            return self.probe_now(implementation, contract, beside)
        key = self.cache.probe_key(implementation, contract, self.sandbox.mode, beside)
        kept = self.cache.get_probe(key)
        if kept is not None:
            return kept[0]
        problem = self.probe_now(implementation, contract, beside)
        if not (problem or "").startswith("importing it takes more than"):
            self.cache.put_probe(key, problem)
        return problem

    def probe_now(self, implementation: str, contract: Contract,
                  beside: tuple[tuple[str, str], ...] = ()) -> str | None:
        return again_once(lambda: self.probe_once(implementation, contract, beside))

    def probe_once(self, implementation: str, contract: Contract,
                   beside: tuple[tuple[str, str], ...] = ()) -> str | None:
        runner = self.current()
        run = runner.new_folder()
        try:
            probe = probe_side(run, implementation, contract, PROBE_LIMIT, beside)
            runner.hand_over(probe.root, untrusted=True)
            ended = runner.run(probe, None, PROBE_LIMIT, None)
        finally:
            runner.drop(run)
        if ended.returncode is None:
            return f"importing it takes more than {PROBE_LIMIT:.0f} s"
        if ended.overflow:
            return "importing it writes into the grader's channel"
        return intake.probe_answer(ended.records, ended.returncode)


def capped(ended: Ended) -> list[str]:
    """What a run that reached a cap is told, once per cap, with the cap's value."""
    said = {"processes": f"the run reached its cap of {RUN_CAPS['processes']:,} processes "
                         "(its tests and its tree together): starting more failed",
            "memory": f"the run reached its cap of {RUN_CAPS['memory'] >> 30} GiB of memory "
                      "(all its processes together): the kernel stopped the process that "
                      "asked for more"}
    return [said[name] for name in ended.capped]


def again_once(run: Callable[[], T]) -> T:
    """``run()``; once more when the runs' worker died under it; a fault of ol the second time.

    A worker that dies is ol's fault, never the run's (no run can reach it): the run is
    started again from scratch, in a new worker.
    """
    try:
        return run()
    except WorkerLost:
        pass
    try:
        return run()
    except WorkerLost as lost:
        raise OlFault(f"the runs' worker died twice under the same run (it said: {lost})") \
            from None


def tests_of(on_test: Callable[[str, str], None]) -> Callable[[str], None]:
    """A record reader that hands on (test id, outcome) of each ``test`` record; anything
    else, malformed or not, is passed over (the records are judged at the run's end)."""
    def read(line: str) -> None:
        event = intake.test_event(line)
        if event is not None:
            on_test(*event)
    return read


def cores() -> int:
    return max(1, os.cpu_count() or 1)


class Slots:
    """How many runs may go at once, shared by every thread of one command: each run holds a
    slot while it goes, so the moment a long run (the course tests) ends, its core goes to
    the runs still waiting."""

    def __init__(self, count: int) -> None:
        self.count = max(1, count)
        self.free = threading.Semaphore(self.count)

    def take(self, cancel: threading.Event | None = None) -> None:
        """A slot, once one is free; Cancelled when ``cancel`` is set meanwhile."""
        while not self.free.acquire(timeout=0.05):
            if cancel is not None and cancel.is_set():
                raise Cancelled

    def give_back(self) -> None:
        self.free.release()

    def holding(self, job: Callable[[threading.Event], T]) -> Callable[[threading.Event], T]:
        """``job`` run while it holds a slot."""
        def held(cancel: threading.Event) -> T:
            self.take(cancel)
            try:
                return job(cancel)
            finally:
                self.give_back()
        return held


def run_together(jobs: Sequence[Callable[[threading.Event], T]],
                 workers: int | Slots | None = None,
                 done: Callable[[T], None] | None = None) -> list[T]:
    """Run ``jobs`` on a thread pool, results in order (``done`` sees each as it is taken).

    ``workers`` is how many go at once: a number, or slots shared with other threads (each
    job then holds one while it runs). Ctrl-C stops every run still going (their process
    groups are killed and their folders removed) before KeyboardInterrupt reaches the
    caller.
    """
    if isinstance(workers, Slots):
        jobs, workers = [workers.holding(job) for job in jobs], workers.count
    cancel = threading.Event()
    with ThreadPoolExecutor(max_workers=workers or cores()) as pool:
        futures = [pool.submit(job, cancel) for job in jobs]
        try:
            results = []
            for future in futures:
                results.append(future.result())
                if done is not None:
                    done(results[-1])
        except BaseException:
            cancel.set()
            for future in futures:
                future.cancel()
            raise
    return results
