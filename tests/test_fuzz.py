"""A fuzzer at every door where bytes a submission controls enter ol.

Hypothesis writes arbitrary bytes, deep and huge JSON and well-formed JSON of the wrong
types to every channel a run hands back (the records socket, the import probe's answer,
the tree's coverage file, the proxy's answers), and lays out arbitrary upload folders
(names with newlines and control characters, links of both kinds, pipes, deep and huge
files). Every example must end in a verdict of the submission's own: a decoded record or a
refusal with a reason, exit 1 or 2 of a real command, never an exception of ol (exit 3),
and with ol's own peak memory under a bound.

Every test is derandomized with no example database, so CI runs the same examples each
time: DECODER_EXAMPLES for the decoders in process, RUN_EXAMPLES real runs per channel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import DS07, FAILING

import ol
from harness.errors import OlError
from harness.grade.workspace import gather
from harness.run import intake
from harness.run.judge import RunResult, judge

DECODER_EXAMPLES = 300
RUN_EXAMPLES = 6
MEMORY_BOUND = 1 << 30  # bytes of peak resident memory ol may reach on any example

DECODERS = settings(derandomize=True, database=None, max_examples=DECODER_EXAMPLES,
                    deadline=None, suppress_health_check=list(HealthCheck))
RUNS = settings(derandomize=True, database=None, max_examples=RUN_EXAMPLES, deadline=None,
                suppress_health_check=list(HealthCheck))

KINDS = ("collected", "collect_error", "test", "coverage", "finish", "other")
FIELDS = ("ids", "plugins", "nodeid", "text", "outcome", "exception", "seconds",
          "exitstatus", "executed_lines", "missing_lines", "executed_branches",
          "missing_branches", "error", "ok", "id", "exit", "hello", "unstarted")

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=5),
                      max_leaves=30)
records = st.fixed_dictionaries(
    {"kind": st.sampled_from(KINDS)},
    optional={name: values for name in FIELDS})


def deep(opening: str) -> st.SearchStrategy[str]:
    return st.integers(17, 300_000).map(lambda depth: opening * depth)


# one line a run could write: text, any JSON (NaN and Infinity among it), a record of the
# right kind with fields of any type, nesting past any cap, numbers past any int
lines = st.one_of(
    st.text(max_size=200),
    values.map(json.dumps),
    records.map(json.dumps),
    deep("[") | deep("{\"a\":") | deep('{"kind": "test", "text": ['),
    st.integers(1, 6000).map(lambda digits: '{"kind": "finish", "exitstatus": '
                             + "9" * digits + ', "plugins": []}'),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "\ud800", "\x00"]).map(
        lambda word: f'{{"kind": "test", "nodeid": "t", "outcome": "passed", '
                     f'"exception": null, "text": "", "seconds": {word}}}'),
)
payloads = st.one_of(lines.map(lambda line: line.encode("utf-8", "surrogatepass")),
                     st.binary(max_size=2000))


# --- the decoders, in process -------------------------------------------------------------

@DECODERS
@given(st.lists(lines, max_size=6), st.integers(-300, 300))
def test_any_records_a_run_writes_are_judged_never_raised(lines, returncode):
    result = judge(lines, returncode, None, 0.0, "")
    assert isinstance(result, RunResult)
    assert result.status.value in ("ok", "crash", "collection error")


@DECODERS
@given(st.lists(lines, max_size=3), st.integers(-300, 300) | st.none())
def test_any_answer_of_the_import_probe_is_an_import_or_a_reason(lines, returncode):
    said = intake.probe_answer(lines, returncode)
    assert said is None or (isinstance(said, str) and said)


@DECODERS
@given(payloads)
def test_any_coverage_file_is_read_as_coverage_or_a_reason(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("coverage") / "coverage.json"
    path.write_bytes(data)
    measured = intake.coverage_file(path)
    assert measured.error.startswith("the tree's coverage") or measured.error == "" \
        or isinstance(measured.error, str)
    assert all(type(line) is int for line in measured.executed_lines + measured.missing_lines)


@DECODERS
@given(payloads)
def test_any_worker_message_is_a_message_or_a_lost_worker(data):
    said = intake.worker_message(data)
    assert said is None or isinstance(said, intake.WorkerSaid)


# --- upload folders, as a platform hands them over ---------------------------------------

names = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="/\x00"),
                min_size=1, max_size=12).filter(lambda name: name not in (".", ".."))
wanted = st.sampled_from(["radix.py", "test_ds07_radix.py", "tl_ds", "tests"])
entries = st.lists(st.tuples(st.lists(names | wanted, min_size=1, max_size=4),
                             st.sampled_from(["file", "folder", "symlink", "hardlink",
                                              "fifo", "huge"]),
                             st.binary(max_size=200)), max_size=8)


def lay_out(root: Path, spec) -> None:
    target = root.parent / "elsewhere"
    target.write_bytes(b"ROOT = 0\n")
    for parts, kind, data in spec:
        path = root.joinpath(*parts)
        if os.path.lexists(path):
            continue  # a name another entry took (writing to a pipe would wait for a reader)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "file":
                path.write_bytes(data)
            elif kind == "folder":
                path.mkdir(exist_ok=True)
            elif kind == "symlink":
                path.symlink_to(target)
            elif kind == "hardlink":
                os.link(target, path)
            elif kind == "fifo":
                os.mkfifo(path)
            else:
                with open(path, "wb") as out:
                    out.truncate(64 << 20)
        except OSError:
            pass  # a name taken by another entry of the example, or too long


@DECODERS
@given(entries)
def test_any_upload_folder_is_gathered_or_refused_with_a_reason(tmp_path_factory, spec):
    scratch = tmp_path_factory.mktemp("upload")
    lay_out(scratch / "upload", spec)
    try:
        workspace = gather(scratch / "upload", scratch / "ws", DS07)
    except OlError as error:
        assert error.platform.startswith("Not graded: ") and "\n" not in str(error)[:80]
    else:
        assert workspace.radix.is_file() and workspace.tests.is_file()


# --- real runs: each channel written by submission code ----------------------------------

def ol_in_a_process(*argv: str | Path) -> tuple[int, int, str]:
    """``ol argv`` in a fresh interpreter: (exit code, peak resident bytes of ol itself,
    standard error)."""
    script = ("import resource, sys, ol\n"
              "code = ol.main(sys.argv[1:])\n"
              "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,"
              " file=sys.stderr)\n"
              "sys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", script, *map(str, argv)],
                          cwd=Path(ol.__file__).parent, capture_output=True, text=True,
                          env={**os.environ, "OL_CACHE": "off"}, timeout=600)
    peak = int(done.stderr.rsplit("PEAK ", 1)[1].split()[0])
    return done.returncode, peak, done.stderr


def hostile(tmp_path: Path, *, tree: str = "", tests: str = "") -> Path:
    root = tmp_path / "ws"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(FAILING, root)
    for path, more in ((root / "tl_ds" / "radix.py", tree), (root / "tests" /
                                                              "test_ds07_radix.py", tests)):
        path.write_text(path.read_text(encoding="utf-8") + textwrap.dedent(more),
                        encoding="utf-8")
    return root


def judged(code: int, peak: int, err: str) -> None:
    assert code in (ol.ExitCode.NOT_PASSED, ol.ExitCode.BAD_INPUT), err
    assert "Traceback" not in err and "fault of ol" not in err, err
    assert peak < MEMORY_BOUND, f"ol's own peak was {peak >> 20} MiB"


@pytest.mark.slow
@RUNS
@given(payloads)
def test_any_bytes_a_test_writes_to_the_records_socket_end_in_a_verdict(tmp_path_factory,
                                                                        data):
    root = hostile(tmp_path_factory.mktemp("records"), tests=f"""

        def test_writes_its_own_records():
            __import__("os").write(3, {data!r} + b"\\n")
        """)
    judged(*ol_in_a_process("tdd", "red", "ds.07", "--workspace", root))


@pytest.mark.slow
@RUNS
@given(payloads)
def test_any_bytes_a_tree_writes_to_the_probes_channel_end_in_a_verdict(tmp_path_factory,
                                                                        data):
    root = hostile(tmp_path_factory.mktemp("probe"), tree=f"""

        __import__("os").write(3, {data!r} + b"\\n")
        """)
    judged(*ol_in_a_process("tdd", "green", "ds.07", "--workspace", root))


@pytest.mark.slow
@RUNS
@given(payloads, st.integers(1, 1 << 17))
def test_any_coverage_file_a_tree_writes_ends_in_a_verdict(tmp_path_factory, data, times):
    """Up to 256 MiB (a run's file-size cap) of anything, in place of the coverage the
    tree's process writes when its tests end."""
    root = hostile(tmp_path_factory.mktemp("coverage"), tree=f"""

        import json as _json

        def _dump(obj, out, *args, **kwargs):
            out.flush()
            with open(out.fileno(), "wb", closefd=False) as raw:
                for _ in range({times}):
                    raw.write({data!r})

        _json.dump = _dump
        """)
    judged(*ol_in_a_process("check", "ds.07", "--workspace", root))


@pytest.mark.slow
@RUNS
@given(payloads)
def test_any_answer_a_tree_gives_its_proxy_ends_in_a_verdict(tmp_path_factory, data):
    """The tree's own process writes its answers: one that replaces the writer answers
    anything at all to the tests that call it."""
    root = hostile(tmp_path_factory.mktemp("answers"), tree=f"""

        import sys as _sys
        _server = _sys.modules.get("tree_server")
        if _server is not None:
            _server.dumps = lambda reply: {data!r} + b"\\n"
        """)
    judged(*ol_in_a_process("tdd", "green", "ds.07", "--workspace", root))
