"""What a class did, for staff after a deadline: ``summary.json``'s aggregates and
``class.html``.

Computed from the batch's rows alone, the numbers a grader reads off the submissions'
own reports: how the grades spread, which planted mutants the class's valid suites miss
most (with the pitfall each plants), which course tests the class's trees fail most, and
which submissions were refused or could not be graded, and why. The page needs nothing
but itself: no script, no network, one table of every submission linking to its page, so
it opens at once for 500 submissions.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from harness.chapter import COURSE_TEST_NAMES, THRESHOLD_PERCENT
from harness.grade.catalog import Mutant
from harness.grade.course import needed
from harness.report.files import BASE_STYLE

INTERNAL = "internal error"  # a fault of ol on a submission (not the submission's): grade again
VERDICTS = ("passed", "not passed", "error", INTERNAL)  # error: the submission could not be graded


def share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def class_summary(rows: Sequence, mutants: Sequence[Mutant]) -> dict:
    """The class's aggregates, from the rows of ``ol grade`` (batch.Row)."""
    graded = [row for row in rows if row.graded]
    trees = [row for row in rows if row.verdict in ("passed", "not passed")]
    total = len(mutants)
    return {
        "submissions": len(rows),
        "verdicts": {verdict: sum(row.verdict == verdict for row in rows)
                     for verdict in VERDICTS},
        "graded_suites": len(graded),
        "mutants_planted": total,
        "kills_needed": needed(total),
        "scores": [{"killed": killed, "suites": sum(len(row.killed) == killed
                                                    for row in graded)}
                   for killed in range(total + 1)],
        "mutants": sorted(({"id": mutant.id, "pitfall": mutant.title,
                            "killed_by": sum(mutant.id in row.killed for row in graded),
                            "suites": len(graded),
                            "share": share(sum(mutant.id in row.killed for row in graded),
                                           len(graded))}
                           for mutant in mutants), key=lambda entry: (entry["share"],
                                                                        entry["id"])),
        "course_tests": sorted(({"name": name,
                                 "failed_by": sum(name in row.course_failed for row in trees),
                                 "trees": len(trees),
                                 "share": share(sum(name in row.course_failed for row in trees),
                                                len(trees))}
                                for name in COURSE_TEST_NAMES),
                               key=lambda entry: (-entry["share"], entry["name"])),
        "refused": [{"submission": row.submission, "verdict": row.verdict,
                     "reason": row.refusal} for row in rows if row.refusal],
    }


STYLE = BASE_STYLE + """
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.bar { background: #4a78c2; height: .8em; display: inline-block; }
.passed { color: #11632b; } .error, .not { color: #a1130c; }
"""


def bar(fraction: float) -> str:
    return f"<span class='bar' style='width:{fraction * 12:.2f}em'></span>"


def class_page(summary: dict, rows: Sequence) -> str:
    """class.html: the aggregates of ``class_summary`` and a table of every submission."""
    verdicts = summary["verdicts"]
    most = max((entry["suites"] for entry in summary["scores"]), default=0) or 1
    scores = [f"<tr><td class='n'>{entry['killed']}</td><td class='n'>{entry['suites']}</td>"
              f"<td>{bar(entry['suites'] / most)}</td></tr>" for entry in summary["scores"]]
    mutants = [f"<tr><td>{entry['id']}</td><td>{html.escape(entry['pitfall'])}</td>"
               f"<td class='n'>{entry['killed_by']} of {entry['suites']}</td>"
               f"<td class='n'>{entry['share']:.0%}</td><td>{bar(entry['share'])}</td></tr>"
               for entry in summary["mutants"]]
    course = [f"<tr><td>{html.escape(entry['name'])}</td>"
              f"<td class='n'>{entry['failed_by']} of {entry['trees']}</td>"
              f"<td class='n'>{entry['share']:.0%}</td><td>{bar(entry['share'])}</td></tr>"
              for entry in summary["course_tests"]]
    refused = [f"<tr><td><a href='{html.escape(entry['submission'])}/check.txt'>"
               f"{html.escape(entry['submission'])}</a></td>"
               f"<td class='{entry['verdict'].split()[0]}'>{entry['verdict']}</td>"
               f"<td>{html.escape(entry['reason'])}</td></tr>" for entry in summary["refused"]]
    everyone = [f"<tr><td><a href='{html.escape(row.submission)}/reports/mutation.html'>"
                f"{html.escape(row.submission)}</a></td>"
                f"<td class='{row.verdict.split()[0]}'>{row.verdict}</td>"
                f"<td class='n'>{row.course_tests_passed or 0}</td>"
                f"<td class='n'>{'' if row.mutants_killed is None else row.mutants_killed}</td>"
                f"<td>{row.s11}</td><td class='n'>{row.seconds:.0f} s</td></tr>" for row in rows]
    line = (f"{summary['submissions']} submissions: {verdicts['passed']} passed, "
            f"{verdicts['not passed']} not passed, {verdicts['error']} could not be graded, "
            f"{verdicts[INTERNAL]} met a fault of ol (grade those again); "
            f"{summary['graded_suites']} suites of tests valid and graded; the bar is "
            f"{THRESHOLD_PERCENT}% ({summary['kills_needed']} of {summary['mutants_planted']} "
            "mutants) with the required mutant killed.")
    head = "<table><thead><tr>{}</tr></thead><tbody>"
    return "\n".join([
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>ds.07: the class</title>", f"<style>{STYLE}</style></head><body>",
        "<h1>ds.07 radix tree: the class</h1>", f"<p id='summary'>{html.escape(line)}</p>",
        "<h2>How the graded suites' kills spread</h2>",
        head.format("<th>mutants killed</th><th>suites</th><th></th>"), *scores,
        "</tbody></table>",
        "<h2>The planted mutants, most missed first</h2>",
        head.format("<th>id</th><th>pitfall</th><th>killed by</th><th>share</th><th></th>"),
        *mutants, "</tbody></table>",
        "<h2>The course tests, most failed first</h2>",
        head.format("<th>course test</th><th>failed by</th><th>share</th><th></th>"),
        *course, "</tbody></table>",
        "<h2>Refused or not graded</h2>",
        (head.format("<th>submission</th><th>verdict</th><th>why</th>") + "".join(refused)
         + "</tbody></table>") if refused else "<p>None.</p>",
        "<h2>Every submission</h2>",
        head.format("<th>submission</th><th>verdict</th><th>course</th><th>killed</th>"
                    "<th>s11</th><th>time</th>"), *everyone, "</tbody></table>",
        "</body></html>"]) + "\n"
