"""ol: the grading harness of a course's chapters, each described by a manifest in chapters/.

A thin command line: it parses, reads the settings, makes the engine, dispatches to a
handler of ``harness.commands``, and maps what comes back to an exit code. Whose an
exception is decides its code (``harness.errors.blame``): every error a user can cause is
an ``OlError``, which ``main`` turns into one paragraph and exit code 2; nothing below
``main`` exits.
"""

from __future__ import annotations

import argparse
import contextlib
import enum
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness import chapter as chapters
from harness.chapter import Chapter
from harness.commands import faults, platforms, staff, student
from harness.commands.settings import Settings, run_cache
from harness.errors import Blame, OlError, Terminated, blame, terminated_by_sigterm
from harness.grade.score import SCORINGS
from harness.report import console
from harness.report import files as reports_module
from harness.run import sandbox
from harness.run.engine import Engine


class ExitCode(enum.IntEnum):
    PASSED = 0       # everything the command checks holds
    NOT_PASSED = 1   # it ran, and what it checks does not hold
    BAD_INPUT = 2    # bad usage or input: unknown module, missing file, a file that will not import
    INTERNAL = 3     # a fault of ol itself (its worker died twice, a bug): nothing was graded
    INTERRUPTED = 130  # stopped by Ctrl-C, after cleaning up
    TERMINATED = 143   # stopped by SIGTERM (a platform's time limit), after cleaning up
    PIPE_CLOSED = 141  # what read its output stopped reading (`ol tests | head`): said nothing


Argument = tuple[tuple[str, ...], dict]  # one argument of a command: add_argument's flags, options


class Parser(argparse.ArgumentParser):
    """argparse that raises OlError instead of printing usage and exiting."""

    def error(self, message: str) -> None:
        raise OlError(f"{message}. Run `ol --help` for the commands and their options.")


@dataclass(frozen=True)
class Command:
    """One command: its name, its help, its handler, its arguments."""

    name: str
    help: str
    handler: Callable[[argparse.Namespace, Engine, Chapter], bool]  # whether it holds
    arguments: tuple[Argument, ...]  # in order
    description: str = ""  # the help, unless the command says more on its own page


def argument(*flags: str, **options) -> Argument:
    return flags, options


MODULE = argument("module", help=f"the module id: {', '.join(chapters.known())}")
WORKSPACE = argument("--workspace", type=Path, default=None, metavar="DIR",
                     help="your workspace (default: ./workspace, or the workspace you are in)")
SANDBOX = argument("--sandbox", choices=sandbox.MODES, default=None,
                   help="how runs of submission code are confined: auto (default: the "
                        "strongest that starts here), bwrap, uid (as root, a separate user) "
                        "or none")
ISOLATION = argument("--isolation", choices=("fast", "strict"), default=None,
                     help="fast: fork each run from a warm worker (the default where fork "
                          "exists); strict: a fresh interpreter per run")
FRESH = argument("--fresh", action="store_true",
                 help="run everything again, ignoring the results kept from earlier runs")
CACHE = argument("--cache", type=Path, default=None, metavar="DIR",
                 help="where results are kept by content (default: OL_CACHE, else "
                      "~/.cache/ol); never inside a submission")
AUDIENCE = argument("--audience", choices=reports_module.AUDIENCES, default="student",
                    help="what reports show: student (default): statuses, killing tests and "
                         "hints; staff: also the reference source and the diffs")
SCORING = argument("--scoring", choices=SCORINGS, default="pass",
                   help="staff: how results.json scores a submission: pass (default): full "
                        "marks when ol check passes, none otherwise; rate: a pass earns 30 of "
                        "40 at the threshold and the rest with the kills beyond it")
REF_DEPS = argument("--ref-deps", action="store_true",
                    help="run a chapter that builds on others on their references instead of "
                         "your own (which must otherwise pass their course tests first)")
REFUSE_FLAGGED = argument("--refuse-flagged", action="store_true",
                          help="staff: refuse to grade a test file the static scan flags (the "
                               "scan is a lint; the sandbox is what contains the tests)")


JOBS = "runs at once (default: one per core)"
COMMANDS = (
    Command("start", "create a workspace: the stub tree and a test file to fill",
            student.cmd_start, (MODULE, WORKSPACE)),
    Command("tests", "the course tests and what your own tests must do", student.cmd_tests,
            (MODULE,)),
    Command("tdd", "run your tests: red against the stub, green against your tree", student.cmd_tdd,
            (argument("phase", choices=("red", "green"),
                      help="red: your tests against the stub; green: against your tree"),
             MODULE, WORKSPACE, REF_DEPS, SANDBOX, FRESH)),
    Command("check", "grade: the course tests on your tree, your tests on the mutants",
            student.cmd_check,
            (MODULE, WORKSPACE, argument("--jobs", type=int, default=None, metavar="N", help=JOBS),
             argument("--report", type=Path, default=None, metavar="DIR",
                      help="also write results.json (Gradescope), junit.xml, mutation.html "
                           "and, for staff, mutation.json (Stryker) into DIR, a new or empty "
                           "folder"),
             argument("--missed", action="store_true",
                      help="list the lines and branches of your tree your tests never run"),
             argument("--require-sandbox", action="store_true",
                      help="staff: refuse to grade (exit 2) where no sandbox can start"),
             argument("--platform", action="store_true",
                      help="staff: texts for a course platform's student (files named as "
                           "submitted, no local command; a submission that cannot be graded "
                           "still gets a results.json saying why); run_autograder passes it"),
             AUDIENCE, SCORING, REFUSE_FLAGGED, REF_DEPS, SANDBOX, ISOLATION, FRESH)),
    Command("diff", "your tree against the reference, once the course tests pass", student.cmd_diff,
            (MODULE, WORKSPACE, REF_DEPS, SANDBOX, FRESH)),
    Command("grade", "staff: grade many workspaces, a report folder each and a summary",
            staff.cmd_grade,
            (MODULE,
             argument("submissions", nargs="+", type=Path, metavar="DIR",
                      help="the workspaces to grade (each laid out as ol start makes one)"),
             argument("--jobs", type=int, default=None, metavar="N",
                      help="submissions graded at once (default: one per two cores)"),
             argument("--out", type=Path, default=Path("ol-grades"), metavar="DIR",
                      help="a new or empty folder for the reports and the summary "
                           "(default: ./ol-grades)"),
             AUDIENCE, SCORING, REFUSE_FLAGGED, SANDBOX, ISOLATION, FRESH, CACHE)),
    Command("mutants", "staff: the kill matrix of the course suite against the planted "
            "mutants", staff.cmd_mutants,
            (MODULE, SANDBOX, ISOLATION)),
    Command("audit", "staff: the course suite against the audit catalog, then mutmut and "
            "coverage of the reference, survivors explained by the chapter's equivalent "
            "mutants", staff.cmd_audit,
            (MODULE, argument("--jobs", type=int, default=None, metavar="N",
                              help="mutants run at once (default: one per core)"),
             argument("--catalog-only", action="store_true",
                      help="only the audit catalog, without mutmut and coverage"),
             argument("--seeds", type=int, default=None, metavar="K",
                      help="instead: the model test under K seeds (the named tests once) "
                           "against the chapter's mutants and the audit catalog, the share "
                           "of seeds under which each is killed"))),
    Command("prairielearn", "staff: grade a PrairieLearn submission (the external grader's "
            "entry point): /grade/student into /grade/results/results.json",
            platforms.cmd_prairielearn,
            (MODULE, argument("--root", type=Path, default=Path("/grade"), metavar="DIR",
                              help="the grading folder PrairieLearn mounts (default: /grade)"),
             SCORING, SANDBOX)),
    Command("gradescope", "staff: grade a Gradescope submission (the bundle's run_autograder "
            "calls it): /autograder/submission into /autograder/results/results.json",
            platforms.cmd_gradescope,
            (MODULE, argument("--root", type=Path, default=Path("/autograder"), metavar="DIR",
                              help="Gradescope's autograder folder (default: /autograder)"),
             SCORING, SANDBOX)),
    Command("gradescope-bundle", "staff: write the Gradescope autograder zip",
            platforms.cmd_gradescope_bundle,
            (MODULE, argument("out", type=Path, metavar="OUT.zip", help="a file that does not "
                              "exist yet"), SCORING),
            description="staff: write the Gradescope autograder zip (setup.sh, run_autograder "
                        "and ol itself) to a new file"),
)


def build_parser() -> Parser:
    parser = Parser(prog="ol", description=f"The grading harness of "
                    f"{', '.join(chapters.known())}: start, tdd, check, diff.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for record in COMMANDS:
        sub = commands.add_parser(record.name, help=record.help,
                                  description=record.description or record.help)
        for flags, options in record.arguments:
            sub.add_argument(*flags, **options)
    return parser


# True where ol runs inside another program's process (the project's test session): Ctrl-C
# then ends that program too, after ol has stopped and removed its runs, rather than
# becoming an exit code that program would read as a result
PASS_ON_INTERRUPTS = False


def main(argv: Sequence[str] | None = None, engine: Engine | None = None) -> int:
    """``ol argv``; its exit code. ``engine``: one to run in, kept open (a test session's),
    used only when it was made with the settings this command reads; else (and by
    default) the command makes its own and closes it. SIGTERM stops it as Ctrl-C does."""
    with terminated_by_sigterm():
        return command(argv, engine)


def command(argv: Sequence[str] | None, engine: Engine | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return ExitCode.BAD_INPUT
        if getattr(args, "jobs", None) is not None and args.jobs < 1:
            raise OlError(f"--jobs must be at least 1, not {args.jobs}")
        handler = next(record.handler for record in COMMANDS if record.name == args.command)
        settings = Settings.read(args, os.environ)
        chapter = settings.chapter(args)
        cache = run_cache(args, settings.cache, chapter)
        if engine is not None and settings.serves(engine, cache):
            held = handler(args, engine, chapter)
            console.show_reused(engine.cache)
        else:
            with Engine(settings.sandbox, settings.strict, cache, settings.sandbox_uid) as own:
                held = handler(args, own, chapter)
                console.show_reused(own.cache)
        return ExitCode.PASSED if held else ExitCode.NOT_PASSED
    except (Exception, KeyboardInterrupt, Terminated) as error:  # whose it is: one rule
        return stopped_by(error, argv)


def stopped_by(error: BaseException, argv: Sequence[str] | None) -> int:
    """What `ol` says of the exception that stopped it, and its exit code, by whose it is."""
    if isinstance(error, BrokenPipeError):  # the reader left: nobody to tell, nothing wrong
        with contextlib.suppress(OSError, ValueError, AttributeError):  # nor at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.PIPE_CLOSED
    whose = blame(error)
    if whose is Blame.INPUT:
        print(f"ol: {error}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    if whose is Blame.STOPPED:
        print("\nol: interrupted; every run was stopped and its files removed.", file=sys.stderr)
        if PASS_ON_INTERRUPTS and isinstance(error, KeyboardInterrupt):
            raise error  # an ol called in process by a session that Ctrl-C must stop too
        return ExitCode.TERMINATED if isinstance(error, Terminated) else ExitCode.INTERRUPTED
    print(f"ol: {faults.said(error, argv)}", file=sys.stderr)  # ours: never a verdict
    return ExitCode.INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())
