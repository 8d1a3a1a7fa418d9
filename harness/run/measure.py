"""Line and branch coverage of one radix.py, as the recorder reports it from inside a run.

A run asked to measure (``Suite(measure=True)``) starts coverage.py on the tree's file
before its tests are collected, with every exclusion pragma switched off so no line can
hide, and writes one ``coverage`` record at the end (intake.py decodes it). This module holds
its numbers and the compact listing of what was never run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Coverage:
    executed_lines: tuple[int, ...]
    missing_lines: tuple[int, ...]
    executed_branches: tuple[tuple[int, int], ...]  # (from line, to line); to < 0: the exit
    missing_branches: tuple[tuple[int, int], ...]
    error: str = ""  # why nothing was measured; everything is empty then

    @property
    def statements(self) -> int:
        return len(self.executed_lines) + len(self.missing_lines)

    @property
    def branches(self) -> int:
        return len(self.executed_branches) + len(self.missing_branches)

    @property
    def covered_lines(self) -> int:
        return len(self.executed_lines)

    @property
    def covered_branches(self) -> int:
        return len(self.executed_branches)

    @property
    def complete(self) -> bool:
        """Every line and every branch ran."""
        return not self.error and not self.missing_lines and not self.missing_branches

    def summary(self) -> str:
        """As in "lines 96% (120 of 125), branches 90% (45 of 50)"."""
        if self.error:
            return f"not measured: {self.error}"
        if not self.statements:
            return "nothing to measure"
        return (f"lines {percent(self.covered_lines, self.statements)} "
                f"({self.covered_lines} of {self.statements}), branches "
                f"{percent(self.covered_branches, self.branches)} "
                f"({self.covered_branches} of {self.branches})")

    def missed(self) -> list[str]:
        """What never ran, a line each: the lines, then the branches never taken."""
        said = []
        if self.missing_lines:
            said.append(f"lines never run: {ranges(self.missing_lines)}")
        if self.missing_branches:
            said.append("branches never taken: " + ", ".join(
                f"{start}->{'exit' if end < 0 else end}" for start, end in self.missing_branches))
        return said


def percent(part: int, whole: int) -> str:
    """Rounded down, so 99.6% never reads as 100%."""
    return "100%" if part >= whole else f"{100 * part // whole}%"


def ranges(lines: Iterable[int]) -> str:
    """[1, 2, 3, 7, 9, 10] as "1-3, 7, 9-10"."""
    spans: list[list[int]] = []
    for line in sorted(lines):
        if spans and line == spans[-1][1] + 1:
            spans[-1][1] = line
        else:
            spans.append([line, line])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
