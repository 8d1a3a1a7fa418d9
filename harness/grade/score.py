"""What a submission earns on a course platform: decided here, only shown by reports.

The points are all on the verdict: by default (``pass``) a passing check earns them all and
any other earns none; with ``rate`` a pass earns PASS_MARK at the threshold and the rest in
proportion to the kills beyond it.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.grade.course import needed
from harness.grade.grading import Check

SCORINGS = ("pass", "rate")
POINTS = 40      # what a submission can earn
PASS_MARK = 30   # --scoring rate: a pass with exactly the kills needed


@dataclass(frozen=True)
class Score:
    earned: float
    out_of: int = POINTS

    @property
    def share(self) -> float:
        """The score as a share in [0, 1], to 4 places (PrairieLearn's)."""
        return round(self.earned / self.out_of, 4)


def points(passed: bool, kills: int, total: int, percent: int, scoring: str = "pass") -> float:
    """What a submission earns of POINTS, from `ol check`'s verdict and its kills of ``total``
    mutants, of which ``percent`` are needed. ``pass`` (the default): all of them when the
    check passes, none otherwise. ``rate``: a pass earns PASS_MARK at the threshold and the
    rest in proportion to the kills beyond it (at 70%: 30 at 13 of 18, 2 more per kill, 40 at
    18); a fail earns none."""
    if not passed:
        return 0
    if scoring == "pass":
        return POINTS
    least = needed(total, percent)
    share = (kills - least) / (total - least) if total > least else 1
    return round(PASS_MARK + (POINTS - PASS_MARK) * min(max(share, 0), 1), 2)


def score(result: Check, scoring: str = "pass") -> Score:
    """The score of a whole check."""
    return Score(points(result.passed, result.tests.kills, len(result.tests.mutants),
                        result.tests.chapter.threshold_percent, scoring))
