"""The engine: each test runs a small purpose-made suite and checks the verdict it gets."""

from __future__ import annotations

import textwrap

import pytest
from support import CONTRACT, RUNS

from harness.run.engine import Engine
from harness.run.judge import Status
from harness.run.layout import Suite

TREE = "class RadixTree:\n    def __init__(self, granule):\n        self.granule = granule\n"


def suite_of(tmp_path, body: str, name: str = "test_suite.py", **files: str) -> Suite:
    folder = tmp_path / "suite"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(textwrap.dedent(body), encoding="utf-8")
    for file_name, text in files.items():
        (folder / file_name).write_text(textwrap.dedent(text), encoding="utf-8")
    return Suite(contract=CONTRACT, files=tuple(sorted(folder.iterdir())))


def run(tmp_path, body: str, implementation: str = TREE, timeout: float = 60,
        engine: Engine = RUNS, **kwargs):
    return engine.run(suite_of(tmp_path, body, **kwargs.pop("files", {})), implementation,
                      timeout=timeout, **kwargs)


def test_a_passing_suite_is_ok_with_every_test_passed(tmp_path):
    result = run(tmp_path, """
        from tl_ds.radix import RadixTree
        def test_granule(): assert RadixTree(3).granule == 3
        def test_other(): pass
    """)
    assert result.status is Status.OK and result.all_passed
    assert [record.name for record in result.records] == ["test_granule", "test_other"]


def test_a_failing_test_is_recorded_with_its_exception_type_and_text(tmp_path):
    result = run(tmp_path, """
        def test_fails(): assert 1 + 1 == 3, "arithmetic is off"
        def test_raises(): raise KeyError(7)
        def test_passes(): pass
    """)
    assert result.status is Status.OK and not result.all_passed
    outcomes = {record.name: (record.outcome, record.exception) for record in result.records}
    assert outcomes == {"test_fails": ("failed", "AssertionError"),
                        "test_raises": ("failed", "KeyError"), "test_passes": ("passed", None)}
    assert "arithmetic is off" in result.failures[0].text


def test_a_test_file_that_does_not_import_is_a_collection_error(tmp_path):
    result = run(tmp_path, "def test_broken(:\n    pass\n")
    assert result.status is Status.COLLECTION_ERROR
    assert "SyntaxError" in result.detail or "invalid syntax" in result.detail


def test_a_hanging_run_is_stopped_at_its_limit(tmp_path):
    result = run(tmp_path, "import time\ndef test_hangs(): time.sleep(60)\n", timeout=2)
    assert result.status is Status.TIMEOUT and result.timed_out
    assert result.seconds < 30


def test_a_test_past_its_own_limit_fails_alone_and_the_others_still_run(tmp_path):
    result = run(tmp_path, """
        def test_spins():
            while True:
                pass
        def test_after(): pass
    """, test_limit=1)
    assert result.status is Status.OK and result.timed_out
    outcomes = {record.name: (record.outcome, record.exception) for record in result.records}
    assert outcomes == {"test_spins": ("failed", "TestTimeout"), "test_after": ("passed", None)}


def test_os_exit_zero_in_a_test_is_a_crash_not_a_pass(tmp_path):
    result = run(tmp_path, "import os\ndef test_leaves(): os._exit(0)\ndef test_b(): pass\n")
    assert result.status is Status.CRASH and not result.all_passed
    assert "stopped the interpreter" in result.detail


def test_os_exit_zero_at_import_of_the_implementation_is_a_crash(tmp_path):
    result = run(tmp_path, "from tl_ds.radix import RadixTree\ndef test_a(): pass\n",
                 implementation="import os\nos._exit(0)\n")
    assert result.status is Status.CRASH


def test_pytest_exit_with_return_code_zero_after_a_failure_is_not_a_pass(tmp_path):
    result = run(tmp_path, """
        import pytest
        def test_fails(): assert False
        def test_leaves(): pytest.exit("done", returncode=0)
        def test_never(): pass
    """)
    assert result.status is Status.CRASH and not result.all_passed


def test_keyboard_interrupt_in_a_test_is_a_crash(tmp_path):
    result = run(tmp_path, "def test_a(): raise KeyboardInterrupt\ndef test_b(): pass\n")
    assert result.status is Status.CRASH


def test_a_plugin_loaded_with_pytest_plugins_to_turn_failures_into_passes_is_a_crash(tmp_path):
    result = run(tmp_path, """
        pytest_plugins = ["forgiving"]
        def test_fails(): assert False
    """, files={"forgiving.py": """
        import pytest
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome = "passed"
    """})
    assert result.status is Status.CRASH and "plugins of their own" in result.detail


def test_a_run_that_collects_other_tests_than_expected_is_a_crash(tmp_path):
    result = run(tmp_path, "def test_a(): pass\n", expected=["tests/test_suite.py::test_b"])
    assert result.status is Status.CRASH and "other tests than expected" in result.detail


def test_the_implementation_is_tl_ds_radix_and_the_environment_is_clean(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/nowhere")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x --bogus")
    monkeypatch.setenv("PYTEST_PLUGINS", "nothing_here")
    result = run(tmp_path, """
        import os, sys
        import tl_ds.radix
        def test_module_and_file_names():
            assert tl_ds.radix.__name__ == "tl_ds.radix"
            assert tl_ds.radix.__file__.endswith(os.path.join("tl_ds", "radix.py"))
        def test_environment():
            for name in ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
                assert name not in os.environ
            assert os.environ["PYTHONHASHSEED"] == "0"
    """)
    assert result.all_passed, [record.text for record in result.failures] or result.detail


def test_a_student_configuration_file_beside_the_tests_is_not_read(tmp_path):
    result = run(tmp_path, "def test_fails(): assert False\n",
                 files={"pytest.ini": "[pytest]\naddopts = -p no:terminal --deselect tests\n",
                        "conftest.py": "import os\nos._exit(0)\n"})
    assert result.status is Status.OK
    assert [record.outcome for record in result.records] == ["failed"]


def test_helper_modules_beside_the_tests_are_importable(tmp_path):
    result = run(tmp_path, "import ds07_helper\ndef test_a(): assert ds07_helper.X == 1\n",
                 files={"ds07_helper.py": "X = 1\n"})
    assert result.all_passed


LITTERING_RUN = """
    import builtins, math, os, sys, threading, time
    import pytest, tl_ds.radix
    def test_litters_the_process():
        math.sqrt = lambda value: "patched"
        builtins.LEFT_BEHIND = True
        pytest.approx = None
        tl_ds.radix.RadixTree.granule = "patched"
        sys.modules["collections"].OrderedDict = None
        threading.Thread(target=time.sleep, args=(3,)).start()
        os.chdir("/")
"""

CLEAN_RUN = """
    import builtins, collections, math, os, threading
    import pytest
    from tl_ds.radix import RadixTree
    def test_sees_none_of_it():
        assert math.sqrt(4) == 2
        assert not hasattr(builtins, "LEFT_BEHIND")
        assert pytest.approx(1.0) == 1.0
        assert RadixTree(3).granule == 3
        assert collections.OrderedDict is not None
        assert threading.active_count() == 1
        assert os.getcwd() != "/"
"""


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fast", "strict"])
def test_what_one_run_does_to_its_process_never_reaches_the_next_run(tmp_path, mode):
    with Engine(fresh=mode == "strict") as engine:
        littered = run(tmp_path / "first", LITTERING_RUN, engine=engine)
        clean = [run(tmp_path / f"then{number}", CLEAN_RUN, engine=engine)
                 for number in range(3)]
    assert littered.status is Status.OK and littered.all_passed, littered.detail
    for result in clean:
        assert result.all_passed, [record.text for record in result.failures] or result.detail


def test_closing_an_engine_lets_its_worker_end_by_itself_instead_of_being_killed(tmp_path):
    with Engine() as engine:
        result = engine.run(suite_of(tmp_path, "def test_one():\n    assert True\n"), TREE,
                            timeout=60)
        assert result.status is Status.OK
        process = engine.runner.worker.process
    # the worker read the end of its channel and exited 0; a worker still waiting for it
    # would have been killed at the close's time limit (a negative code: its signal)
    assert process.returncode == 0
