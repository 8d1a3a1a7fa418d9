"""What a student is graded on: the course tests' catalog and the rung of their own tests."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

from harness.chapter import (
    COURSE_TEST_FILE,
    COURSE_TEST_NAMES,
    COURSE_TESTS,
    ROOT,
    THRESHOLD_PERCENT,
)
from harness.errors import OlError

CATALOG = COURSE_TESTS / "catalog.toml"


WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def in_words(count: int) -> str:
    """A count as a sentence says it: words up to ten ("six"), digits beyond."""
    return WORDS[count] if 0 <= count < len(WORDS) else str(count)


def meets_threshold(killed: int, total: int) -> bool:
    """True when ``killed / total >= 0.70``, in integers (at 70%, 13 of 18
    passes and 12 does not)."""
    return total > 0 and killed * 100 >= THRESHOLD_PERCENT * total


def needed(total: int) -> int:
    """The fewest kills out of ``total`` that meet the threshold."""
    return next(killed for killed in range(total + 1) if meets_threshold(killed, total))


@dataclass(frozen=True)
class CourseTest:
    name: str
    kind: str
    checks: str
    why: str


def load_course_tests() -> tuple[CourseTest, ...]:
    """The catalog, checked against the names the course suite runs."""
    try:
        entries = tomllib.loads(CATALOG.read_text(encoding="utf-8"))["test"]
        tests = tuple(CourseTest(entry["name"], entry["kind"], entry["checks"], entry["why"])
                      for entry in entries)
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError) as error:
        raise OlError(f"{CATALOG}: cannot read the course test catalog ({error!r}); "
                      "restore it with `git checkout tests/course/catalog.toml`") from None
    if tuple(test.name for test in tests) != COURSE_TEST_NAMES:
        raise OlError(f"{CATALOG} must list the {len(COURSE_TEST_NAMES)} course tests in "
                      f"the order of {COURSE_TEST_FILE.relative_to(ROOT)}")
    return tests
