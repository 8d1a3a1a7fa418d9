"""What a student is graded on: the course tests' catalog and the rung of their own tests."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

from harness.chapter import Chapter
from harness.errors import OlError

WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def in_words(count: int) -> str:
    """A count as a sentence says it: words up to ten ("six"), digits beyond."""
    return WORDS[count] if 0 <= count < len(WORDS) else str(count)


def meets_threshold(killed: int, total: int, percent: int) -> bool:
    """True when ``killed / total >= percent / 100``, in integers (at 70%, 13 of 18
    passes and 12 does not)."""
    return total > 0 and killed * 100 >= percent * total


def needed(total: int, percent: int) -> int:
    """The fewest kills out of ``total`` that meet the threshold."""
    return next(killed for killed in range(total + 1)
                if meets_threshold(killed, total, percent))


def references(chapter: Chapter) -> tuple[tuple[str, str], ...]:
    """The references of the chapters ``chapter`` builds on, as (module, text): what every
    tree of ours imports them as, and a student's with --ref-deps."""
    return tuple((needed.module, needed.reference_source())
                 for needed in chapter.needed)


@dataclass(frozen=True)
class CourseTest:
    name: str
    kind: str
    checks: str
    why: str


def load_course_tests(chapter: Chapter) -> tuple[CourseTest, ...]:
    """The catalog, checked against the tests the course's test file defines."""
    catalog = chapter.course_catalog
    try:
        entries = tomllib.loads(catalog.read_text(encoding="utf-8"))["test"]
        tests = tuple(CourseTest(entry["name"], entry["kind"], entry["checks"], entry["why"])
                      for entry in entries)
        defined = tuple(line.split("(")[0].removeprefix("def ") for line in
                        chapter.course_test_file.read_text(encoding="utf-8").splitlines()
                        if line.startswith("def test_"))
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError) as error:
        raise OlError(f"{catalog}: cannot read the course test catalog ({error!r}); "
                      f"restore it with `git checkout {chapter.shown(catalog)}`") from None
    if tuple(test.name for test in tests) != defined:
        raise OlError(f"{catalog} must list the {len(defined)} course tests in "
                      f"the order of {chapter.shown(chapter.course_test_file)}")
    return tests
