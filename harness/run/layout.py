"""The run folder: what a run of a suite against one tree sees, one folder per side.

Every run gets a folder of its own, made fresh and removed afterwards (run/process.py
starts each side confined as run/sandbox.py says)::

    run/test/pytest.ini       our configuration (the only one pytest reads)
    run/test/impl/<package>/  the contract's module (tl_ds/radix.py, say): the tree itself
                              (our own suites on our own trees), or the chapter's proxy to
                              the tree side
    run/test/support/         the proxy's channel (tree_proxy.py) and whatever the suite
                              imports besides (the recorder, ol_recorder.py, is loaded by
                              the worker before it forks the run)
    run/test/tests/           copies of the suite's files
    run/test/home/            HOME, TMPDIR and the working directory of the tests
    run/tree/tree/<package>/  the tree behind the proxy; calls/ the chapter's answers to the
                              proxy's calls; views/ the course machine's views

A suite that is not ours (a student's tests) always reaches its tree through the proxy, so
it never shares a process, a folder or a view of /proc with any tree.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.run.process import Side
from harness.run.sandbox import PAYLOAD

CHANNEL = PAYLOAD / "tree_proxy.py"
WIRE = PAYLOAD / "tree_wire.py"
PROBE_COVERAGE = PAYLOAD / "coverage_probe.py"


@dataclass(frozen=True)
class Contract:
    """What a run's tests import and its tree must be: a module, its class and the names it
    exports; and, for a tree behind the proxy, the module the tests import in its place
    (``proxy``) and the one that answers its calls on the tree side (``calls``)."""

    module: str                     # "tl_ds.radix"
    cls: str                        # "RadixTree"
    exports: tuple[str, ...]
    proxy: Path
    calls: Path

    @property
    def path(self) -> Path:
        """The module's file in a folder on the path: tl_ds/radix.py."""
        return Path(*self.module.split(".")).with_suffix(".py")


@dataclass(frozen=True)
class Suite:
    """Test files to copy into ``tests/`` (``files``, paths of course material) or to write
    there (``tests``, (name, text): a submission's, as read once), and support files or
    packages for ``support/``."""

    files: tuple[Path, ...]
    contract: Contract
    tests: tuple[tuple[str, str], ...] = ()
    support: tuple[Path, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    # None: the implementation is the contract's module in the test process (only for our
    # own suites on our own trees). Otherwise the module is the contract's proxy and the
    # implementation runs on the tree side of the run; a non-empty tuple names the views
    # (the first file is their module) the tree side runs for the course machine, and gives
    # the proxy's class its _ol_view and _ol_along methods.
    proxy: tuple[Path, ...] | None = None
    # measure line and branch coverage of the tree's module, on whichever side it runs
    measure: bool = False
    # the suite is ours (the course's), not a submission's: in the uid sandbox it runs as
    # the grader, out of reach of the submission's tree
    ours: bool = False
    # modules the implementation imports, (module, text), written beside it wherever it
    # runs: the chapters it builds on (a student's own, or their references)
    beside: tuple[tuple[str, str], ...] = ()


VIEW_METHOD = """


from tree_proxy import along as _ol_along
from tree_proxy import view as _ol_view

{cls}._ol_view = _ol_view
{cls}._ol_along = _ol_along
"""


def lay_out(run: Path, suite: Suite, implementation: str, limits: tuple[float, float],
            trusted: bool) -> tuple[Side, Side | None]:
    """Write the run's folders; the two sides to start."""
    timeout, test_limit = limits
    test = run / "test"
    support = test / "support"
    support.mkdir(parents=True)
    contract = suite.contract
    if suite.proxy is None:
        write_module(test / "impl", contract.path, implementation)
        write_beside(test / "impl", suite.beside)
    else:
        proxy = contract.proxy.read_text(encoding="utf-8") + (
            VIEW_METHOD.format(cls=contract.cls) if suite.proxy else "")
        write_module(test / "impl", contract.path, proxy)
        for item in (CHANNEL, WIRE):
            shutil.copy(item, support / item.name)
    for item in suite.support:
        copy_item(item, support / item.name)
    tests = test / "tests"
    tests.mkdir()
    for item in suite.files:
        copy_item(item, tests / item.name)
    for name, text in suite.tests:
        (tests / name).write_text(text, encoding="utf-8")
    (test / "home").mkdir()
    (test / "pytest.ini").write_text(
        "[pytest]\npythonpath = impl support\ntestpaths = tests\n", encoding="utf-8")
    measured = test / "impl" / contract.path if suite.measure and suite.proxy is None \
        else None
    test_side = Side(test, test / "home", clean_environment(test, suite.env), run_limits(timeout),
                     "pytest", tuple(command_line(test, test_limit, measured)),
                     trusted=suite.ours)
    if suite.proxy is None:
        return test_side, None
    tree = run / "tree"
    write_module(tree / "tree", contract.path, implementation)
    write_beside(tree / "tree", suite.beside)
    (tree / "calls").mkdir()
    copy_item(contract.calls, tree / "calls" / contract.calls.name)
    if suite.proxy:
        views = tree / "views"
        views.mkdir()
        for item in suite.proxy:
            copy_item(item, views / item.name)
    (tree / "home").mkdir()
    coverage = tree / "coverage.json"
    coverage.touch()  # the tree side writes its coverage here, the one file it may write
    tree_side = Side(tree, tree / "home", clean_environment(tree, {}), run_limits(timeout),
                     "tree", trusted=trusted, measure=suite.measure,
                     views=suite.proxy[0].stem if suite.proxy else "", writable=(coverage,),
                     module=contract.module, cls=contract.cls, exports=contract.exports,
                     calls=contract.calls.stem)
    return test_side, tree_side


def write_module(folder: Path, path: Path, text: str) -> None:
    """``text`` as the module at ``path`` (tl_ds/radix.py) under ``folder``, each package
    above it with an empty ``__init__.py``."""
    (folder / path).parent.mkdir(parents=True, exist_ok=True)
    for package in path.parents:
        if package != Path(".") and not (folder / package / "__init__.py").exists():
            (folder / package / "__init__.py").write_text("", encoding="utf-8")
    (folder / path).write_text(text, encoding="utf-8")


def write_beside(folder: Path, modules: tuple[tuple[str, str], ...]) -> None:
    for module, text in modules:
        write_module(folder, Path(*module.split(".")).with_suffix(".py"), text)


def copy_item(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copy(source, target)


def clean_environment(side: Path, extra: Mapping[str, str]) -> dict[str, str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(side / "home"),
        "TMPDIR": str(side / "home"),
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "CI": "true",  # Hypothesis's CI profile: derandomized, no database, no deadline
    }
    env.update(extra)
    return env


LIMITS = {                     # resource limits of every run (a run also has its wall clock)
    "memory": 4 << 30,         # bytes of address space
    "files": 256,              # open files
    "file_size": 256 << 20,    # bytes in any one file it writes
    "processes": 4096,         # processes of the user (only enforced for an unprivileged user)
}


def run_limits(timeout: float) -> dict[str, int]:
    return {**LIMITS, "cpu": int(timeout) + 5}


def command_line(side: Path, test_limit: float, measured: Path | None = None) -> list[str]:
    return ["-c", str(side / "pytest.ini"), "--rootdir", str(side), "-p", "no:cacheprovider",
            "--noconftest", "--ol-test-limit", str(test_limit),
            "--ol-coverage", str(measured or ""), "-q", "--tb=short", str(side / "tests")]



def probe_side(run: Path, implementation: str, contract: Contract, limit: float,
               beside: tuple[tuple[str, str], ...] = ()) -> Side:
    """A side that imports ``implementation`` as the contract's module, with the modules
    ``beside`` it, checks that it holds every name the contract exports, and says how that
    went."""
    side = run / "tree"
    write_module(side / "tree", contract.path, implementation)
    write_beside(side / "tree", beside)
    (side / "home").mkdir()
    return Side(side, side / "home", clean_environment(side, {}), run_limits(limit), "probe",
                (str(side / "tree"),), module=contract.module, cls=contract.cls,
                exports=contract.exports)
