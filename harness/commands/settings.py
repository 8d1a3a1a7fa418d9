"""What a command is told besides its inputs: its flags and the environment, read once."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness import chapter as chapters
from harness.chapter import Chapter
from harness.errors import OlError
from harness.grade import workspace as workspace_module
from harness.run import sandbox
from harness.run.cache import RunCache
from harness.run.engine import Engine


@dataclass(frozen=True)
class Settings:
    """What a command is told besides its inputs, read once here from its flags and the
    environment, and passed down: nothing below ol.py reads a setting of ol from the
    environment."""

    sandbox: str                # --sandbox, else OL_SANDBOX, else auto
    strict: bool                # a fresh worker per run: --isolation strict or OL_ISOLATION
    cache: Path | None          # where results are kept; None: kept nowhere
    chapters: tuple[Path, ...] = ()  # folders of further chapter manifests: OL_CHAPTERS
    sandbox_uid: int = sandbox.NOBODY  # who submission code runs as in the uid sandbox:
    # OL_SANDBOX_UID (the Gradescope bundle sets it to a dedicated user)

    @classmethod
    def read(cls, args: argparse.Namespace, environ: Mapping[str, str]) -> Settings:
        isolation = getattr(args, "isolation", None) or environ.get("OL_ISOLATION") or "fast"
        return cls(sandbox=getattr(args, "sandbox", None) or environ.get("OL_SANDBOX") or "auto",
                   strict=isolation == "strict", cache=cache_folder(args, environ),
                   chapters=tuple(Path(folder) for folder in
                                  environ.get("OL_CHAPTERS", "").split(os.pathsep) if folder),
                   sandbox_uid=sandbox_uid(environ))

    def serves(self, engine: Engine, cache: RunCache | None) -> bool:
        """Whether ``engine`` was made as these settings (with ``cache``) would make one."""
        return (engine.sandbox_mode, engine.fresh, engine.sandbox_uid, engine.cache) == (
            self.sandbox, self.strict, self.sandbox_uid, cache)

    def chapter(self, args: argparse.Namespace) -> Chapter:
        """The chapter the command names; the course's first for one that names none."""
        module = getattr(args, "module", None)
        return chapters.default() if module is None else chapters.find(module, self.chapters)


def sandbox_uid(environ: Mapping[str, str]) -> int:
    said = environ.get("OL_SANDBOX_UID", "").strip()
    if not said:
        return sandbox.NOBODY
    if not said.isdigit() or int(said) == 0:
        raise OlError(f"OL_SANDBOX_UID is {said!r}: name the numeric uid of an unprivileged "
                      "user that owns nothing (not 0), or unset it for nobody (65534).")
    return int(said)


def cache_folder(args: argparse.Namespace, environ: Mapping[str, str]) -> Path | None:
    """Where a command keeps results: none for --fresh or a command without a cache; else
    --cache, else OL_CACHE (``off``: none), else the user's cache folder
    (``$XDG_CACHE_HOME/ol`` or ``~/.cache/ol``)."""
    if not hasattr(args, "fresh") or args.fresh:
        return None
    if getattr(args, "cache", None):
        return args.cache
    said = environ.get("OL_CACHE", "")
    if said == "off":
        return None
    if said:
        return Path(said)
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ol"


def run_cache(args: argparse.Namespace, folder: Path | None,
              chapter: Chapter) -> RunCache | None:
    """The cache at ``folder``, refused where it overlaps a submission."""
    if folder is None:
        return None
    folder = folder.resolve()
    given = list(getattr(args, "submissions", ()))
    if hasattr(args, "workspace"):
        given.append(workspace_module.locate(args.workspace, chapter).root)
    for root in map(Path.resolve, given):
        if folder.is_relative_to(root) or root.is_relative_to(folder):
            raise OlError(f"the cache folder {folder} and the submission {root} overlap: a "
                          "submission must never be able to write what ol reads as a kept "
                          "result. Pass --cache a folder outside every submission")
    return RunCache(folder)
