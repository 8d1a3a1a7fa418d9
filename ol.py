"""ol: the grading harness of course module ds.07, the radix tree over token ids.

A thin command line: it parses, dispatches to ``cmd_<name>``, and formats. The work is in
the ``harness`` package. Every error a user can cause is an ``OlError``, which ``main``
turns into one paragraph and exit code 2; nothing below ``main`` exits.
"""

from __future__ import annotations

import argparse
import enum
import sys
from collections.abc import Callable, Sequence

from harness import catalog, mutation
from harness.errors import OlError
from harness.project import COURSE_TEST_NAMES, MODULES, reference_source


class ExitCode(enum.IntEnum):
    PASSED = 0       # everything the command checks holds
    NOT_PASSED = 1   # it ran, and what it checks does not hold
    BAD_INPUT = 2    # bad usage or input: unknown module, missing file, a file that will not import
    INTERRUPTED = 130  # stopped by Ctrl-C, after cleaning up


class Parser(argparse.ArgumentParser):
    """argparse that raises OlError instead of printing usage and exiting."""

    def error(self, message: str) -> None:
        raise OlError(f"{message}. Run `ol --help` for the commands and their options.")


def build_parser() -> Parser:
    parser = Parser(prog="ol", description="The ds.07 grading harness.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    mutants = commands.add_parser(
        "mutants", help="staff: the kill matrix of the course suite against the 18 mutants")
    mutants.add_argument("module", help="the module id, ds.07")
    return parser


def check_module(module: str) -> None:
    if module not in MODULES:
        raise OlError(f"unknown module id {module!r}: this harness grades {', '.join(MODULES)}. "
                      f"Run e.g. `ol tests ds.07`.")


def short(name: str) -> str:
    return name.removeprefix("test_")


def cmd_mutants(args: argparse.Namespace) -> int:
    """The course suite against every planted mutant: who kills what."""
    check_module(args.module)
    mutants = catalog.load_catalog()
    suite = mutation.course_suite("verdict")
    print(f"ol mutants {args.module}: the {len(COURSE_TEST_NAMES)} course tests against "
          f"the {len(mutants)} planted mutants")
    baseline = mutation.prove_wiring(suite, reference_source(), mutation.COURSE_IDS)
    print(f"wiring: the course tests pass on the reference ({len(baseline.records)} tests, "
          f"{baseline.seconds:.1f} s) and kill the placebo")
    limits = mutation.Limits.from_reference(baseline)

    def progress(result: mutation.MutantResult) -> None:
        state = "killed" if result.killed else "SURVIVED"
        print(f"  ran {result.mutant.id}: {state}", file=sys.stderr, flush=True)

    results = mutation.run_mutants(suite, mutants, limits, mutation.COURSE_IDS, progress)
    width = max(len(result.mutant.title) for result in results)
    print(f"\n{'id':<4} {'pitfall':<{width}}  caught_by  killed by")
    complete = 0
    for result in results:
        missing = [name for name in result.mutant.caught_by if name not in result.killers]
        if result.run.status is not mutation.Status.OK:
            missing = []  # a timeout or crash stops every test at once
        verdict = "yes" if result.killed and not missing else "NO"
        complete += verdict == "yes"
        killers = ", ".join(map(short, result.killers)) or result.killed_by or "nothing"
        if result.run.status is not mutation.Status.OK:
            killers = result.run.status.value
        print(f"{result.mutant.id:<4} {result.mutant.title:<{width}}  {verdict:<9}  {killers}")
        if missing:
            print(f"{'':<4} {'':<{width}}  {'':<9}  missed by {', '.join(map(short, missing))}")
    killed = sum(result.killed for result in results)
    print(f"\n{killed} of {len(results)} mutants killed; {complete} of {len(results)} killed by "
          f"every course test their caught_by names.")
    return ExitCode.PASSED if complete == len(results) else ExitCode.NOT_PASSED


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "mutants": cmd_mutants,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return ExitCode.BAD_INPUT
        return COMMANDS[args.command](args)
    except OlError as error:
        print(f"ol: {error}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        print("\nol: interrupted; every run was stopped and its files removed.", file=sys.stderr)
        return ExitCode.INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
