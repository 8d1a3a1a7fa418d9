"""The pytest plugin every graded run loads: one JSON line per event, written as it happens.

The runs' worker imports it before it forks a run, and each run's pytest registers it
(``pytest.main(argv, plugins=[ol_recorder])``), so no run imports it again; it imports
nothing of the harness. The engine reads the lines back and trusts a run only when they
are complete: the collected ids, one outcome per collected test, and a closing line.
"""

from __future__ import annotations

import json
import os
import signal
import types

import pytest
from coverage_probe import Measure

RECORDS = 3  # the descriptor of the engine's records socket
TEXT_LIMIT = 6000  # characters of a failure's text kept: its head and its tail


def cut(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` whole, or its first third and last two thirds around a marker."""
    if len(text) <= limit:
        return text
    head = limit // 3
    return f"{text[:head]}\n[... {len(text) - limit} characters cut ...]\n{text[-(limit - head):]}"
KNOWN_PLUGIN_PREFIXES = ("_pytest.", "pytest", "ol_recorder")


class TestTimeout(BaseException):
    """Raised in a test that runs past its limit; not an Exception, so no test swallows it."""


def alarm(limit: float):
    """The SIGALRM handler of a test with ``limit`` seconds: it says the limit."""
    def on_alarm(signum, frame) -> None:
        raise TestTimeout(f"the test ran past its time limit of {limit:g} s and was stopped")
    return on_alarm


class Recorder:
    def __init__(self, test_limit: float, measure: Measure | None) -> None:
        self.out = os.fdopen(RECORDS, "w", encoding="utf-8")  # the engine's socket
        self.test_limit = test_limit
        self.measure = measure
        self.outcomes: dict[str, dict] = {}
        self.exceptions: dict[tuple[str, str], str] = {}

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item):
        if self.test_limit > 0:
            signal.signal(signal.SIGALRM, alarm(self.test_limit))
            signal.setitimer(signal.ITIMER_REAL, self.test_limit)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def write(self, **record) -> None:
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    @pytest.hookimpl(trylast=True)
    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.write(kind="collect_error", nodeid=report.nodeid,
                       text=cut(str(report.longreprtext)))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session) -> None:
        self.write(kind="collected", ids=[item.nodeid for item in session.items],
                   plugins=foreign_plugins(session.config))

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        if call.excinfo is not None:
            self.exceptions[(item.nodeid, call.when)] = call.excinfo.typename
        yield

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report) -> None:
        record = self.outcomes.setdefault(
            report.nodeid, {"outcome": "passed", "exception": None, "text": "", "seconds": 0.0})
        record["seconds"] += report.duration
        if report.when == "call" and hasattr(report, "wasxfail"):
            record["outcome"] = "xfailed" if report.skipped else "xpassed"
        elif report.failed:
            if record["outcome"] in ("passed", "skipped"):
                record["outcome"] = "failed" if report.when == "call" else "error"
                record["exception"] = self.exceptions.get((report.nodeid, report.when))
                text = str(report.longreprtext)
                captured = "".join(content for _, content in report.sections)
                record["text"] = cut(f"{text}\n{captured}" if captured else text)
        elif report.skipped and record["outcome"] == "passed":
            record["outcome"] = "skipped"

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid, location) -> None:
        record = self.outcomes.pop(nodeid, None)
        if record is not None:
            self.write(kind="test", nodeid=nodeid, **record)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus) -> None:
        if self.measure is not None:
            self.write(kind="coverage", **self.measure.stop())
        self.write(kind="finish", exitstatus=int(exitstatus),
                   plugins=foreign_plugins(session.config))
        self.out.close()


def foreign_plugins(config) -> list[str]:
    """Plugins registered that are neither pytest's own nor this recorder."""
    names = []
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, types.ModuleType):
            module = plugin.__name__
        else:
            module = getattr(plugin, "__module__", None) or type(plugin).__module__
        if not module.startswith(KNOWN_PLUGIN_PREFIXES) and module != "builtins":
            names.append(module)
    return sorted(names)


def pytest_addoption(parser) -> None:
    parser.addoption("--ol-test-limit", type=float, default=0.0,
                     help="seconds a test may run before it fails with TestTimeout (0: none)")
    parser.addoption("--ol-coverage", default="",
                     help="a file to measure line and branch coverage of (empty: none)")


def pytest_configure(config) -> None:
    measured = config.getoption("--ol-coverage")
    recorder = Recorder(config.getoption("--ol-test-limit"),
                        Measure(measured) if measured else None)
    config.pluginmanager.register(recorder, "ol_recorder_session")
