"""What a command is told besides its inputs: flags first, then the environment, read once
at the edge (ol.py) and passed down as one record."""

from __future__ import annotations

from pathlib import Path

import pytest

import ol
from harness.commands.settings import Settings
from harness.errors import OlError
from harness.run.engine import Engine


def settings(argv: list[str], environ: dict[str, str]) -> Settings:
    return Settings.read(ol.build_parser().parse_args(argv), environ)


CHECK = ["check", "ds.07"]


def test_without_flags_or_environment_a_check_uses_any_sandbox_a_warm_worker_and_the_user_cache():
    told = settings(CHECK, {"XDG_CACHE_HOME": "/home/me/.cache"})
    assert told == Settings(sandbox="auto", strict=False, cache=Path("/home/me/.cache/ol"))


def test_the_environment_chooses_when_no_flag_does():
    told = settings(CHECK, {"OL_SANDBOX": "uid", "OL_ISOLATION": "strict",
                            "OL_CACHE": "/srv/cache"})
    assert told == Settings(sandbox="uid", strict=True, cache=Path("/srv/cache"))


def test_a_flag_beats_the_environment():
    told = settings([*CHECK, "--sandbox", "none", "--isolation", "fast", "--fresh"],
                    {"OL_SANDBOX": "uid", "OL_ISOLATION": "strict", "OL_CACHE": "/srv/cache"})
    assert told == Settings(sandbox="none", strict=False, cache=None)


def test_ol_cache_off_keeps_nothing():
    assert settings(CHECK, {"OL_CACHE": "off"}).cache is None


def test_a_command_without_a_cache_keeps_nothing_whatever_the_environment_says():
    assert settings(["tests", "ds.07"], {"OL_CACHE": "/srv/cache"}).cache is None


def test_an_engine_made_without_settings_reads_no_environment(monkeypatch):
    monkeypatch.setenv("OL_SANDBOX", "uid")
    monkeypatch.setenv("OL_ISOLATION", "strict")
    engine = Engine()
    assert (engine.sandbox_mode, engine.isolation) == ("auto", "fast")


@pytest.fixture
def made(monkeypatch) -> list[str]:
    """The sandbox mode of every Engine made from now on, in order."""
    modes: list[str] = []
    real = Engine.__init__

    def remember(self, *args, **kwargs):
        real(self, *args, **kwargs)
        modes.append(self.sandbox_mode)

    monkeypatch.setattr(Engine, "__init__", remember)
    return modes


def test_the_sandbox_the_environment_names_is_the_one_a_command_uses(monkeypatch, capsys,
                                                                      made):
    monkeypatch.setenv("OL_SANDBOX", "none")
    ol.main(["tests", "ds.07"])
    assert made == ["none"]


def test_the_uid_sandbox_user_is_read_once_from_the_environment_and_a_bad_one_refused(capsys):
    assert settings(CHECK, {}).sandbox_uid == 65534  # nobody
    assert settings(CHECK, {"OL_SANDBOX_UID": "64000"}).sandbox_uid == 64000
    for bad in ("0", "root", "-5"):
        with pytest.raises(OlError, match="OL_SANDBOX_UID"):
            settings(CHECK, {"OL_SANDBOX_UID": bad})


def test_an_engine_hands_its_sandbox_user_to_the_sandbox_it_chooses():
    with Engine("none", sandbox_uid=64000) as engine:
        assert engine.sandbox.uid == 64000
        with engine.sibling() as sibling:
            assert sibling.sandbox is engine.sandbox  # chosen once, not probed again


def test_a_command_runs_in_an_engine_it_is_given_only_when_it_was_made_with_its_settings(
        monkeypatch, capsys, made):
    monkeypatch.delenv("OL_SANDBOX", raising=False)
    monkeypatch.delenv("OL_ISOLATION", raising=False)
    given, other = Engine(), Engine("none")
    made.clear()
    assert ol.main(["tests", "ds.07"], engine=given) == ol.ExitCode.PASSED
    assert made == []  # ran in the engine given, which stays open for the next command
    ol.main(["tests", "ds.07"], engine=other)
    assert made == ["auto"]  # made with other settings: the command made its own
    monkeypatch.setenv("OL_SANDBOX", "none")
    ol.main(["tests", "ds.07"], engine=given)
    assert made == ["auto", "none"]
