"""What a class did, for staff after a deadline: ``summary.json``'s aggregates and
``class.html``.

Computed from the batch's rows alone, the numbers a grader reads off the submissions'
own reports. The page answers staff's first question first: how many passed, then which
pitfalls the class's valid suites miss most (the required one set apart), how the kill
rates spread against the threshold (an inline SVG), which course tests the class's trees
fail most, and which submissions were refused or could not be graded, and why. A refused
suite counts in no aggregate. The page needs nothing but itself: no script, no network;
a submission links to its page only where it has one (to its check.txt otherwise), so it
opens at once for 500 submissions."""

from __future__ import annotations

import enum
import html
from collections.abc import Sequence

from harness.chapter import Chapter
from harness.grade.catalog import Mutant
from harness.grade.course import needed
from harness.report.files import BASE_STYLE, breakable


class Verdict(enum.StrEnum):
    """A submission's outcome in `ol grade`: written as its text in every summary."""

    PASSED = "passed"
    NOT_PASSED = "not passed"
    ERROR = "error"              # the submission could not be graded (its fault: exit 2)
    INTERNAL = "internal error"  # a fault of ol on it, not the submission's: grade again

    @property
    def graded(self) -> bool:
        """Its tree and tests were run: it has a page and counts."""
        return self in (Verdict.PASSED, Verdict.NOT_PASSED)

    @property
    def css(self) -> str:
        """The class its cell takes on the class page."""
        return self.value.split()[0]



def share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def class_summary(rows: Sequence, mutants: Sequence[Mutant], chapter: Chapter) -> dict:
    """The class's aggregates, from the rows of ``ol grade`` (batch.Row)."""
    graded = [row for row in rows if row.graded]
    trees = [row for row in rows if row.verdict.graded]
    total = len(mutants)
    return {
        "submissions": len(rows),
        "verdicts": {verdict: sum(row.verdict == verdict for row in rows)
                     for verdict in Verdict},
        "graded_suites": len(graded),
        "mutants_planted": total,
        "kills_needed": needed(total, chapter.threshold_percent),
        # per kill count, the graded suites and how many of their submissions passed
        "scores": [{"killed": killed,
                    "suites": sum(len(row.killed) == killed for row in graded),
                    "passed": sum(len(row.killed) == killed and row.verdict is Verdict.PASSED
                                  for row in graded)}
                   for killed in range(total + 1)],
        "mutants": sorted(({"id": mutant.id, "pitfall": mutant.title,
                            "required": mutant.required,
                            "killed_by": sum(mutant.id in row.killed for row in graded),
                            "missed_by": sum(mutant.id not in row.killed for row in graded),
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
                                for name in chapter.course_test_names),
                               key=lambda entry: (-entry["share"], entry["name"])),
        "refused": [{"submission": row.submission, "verdict": row.verdict,
                     "reason": row.refusal} for row in rows if row.refusal],
    }


STYLE = BASE_STYLE + """
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.track { display: inline-block; width: 10em; vertical-align: middle; }
.bar { background: #4a78c2; height: .8em; display: block; }
.bar.missed { background: #c2452f; }
.passed { color: #11632b; } .error, .not, .internal { color: #a1130c; }
.headline { font-size: 1.25em; margin: .4em 0; }
.refused { color: #666; font-style: italic; }
.wide { overflow-x: auto; }
svg text { font: 12px system-ui, sans-serif; fill: #222; }
@media (max-width: 40em) { .track { width: 3.5em; } }
"""

def bar(fraction: float, kind: str = "") -> str:
    """A bar filling ``fraction`` of its track, titled with the share it stands for."""
    return (f"<span class='track'><span class='{' '.join(('bar', kind)).strip()}' "
            f"style='width:{fraction:.2%}' title='{fraction:.0%}'></span></span>")


def missed_share(entry: dict) -> float:
    return entry["missed_by"] / entry["suites"] if entry["suites"] else 0.0


def required_box(entry: dict) -> str:
    """The required mutant, set apart: a suite that misses it does not pass."""
    missed = missed_share(entry)
    return (f"<div class='required' id='required'><h3>Required: {entry['id']}, "
            f"{html.escape(entry['pitfall'])}</h3><p>Missed by {entry['missed_by']} of "
            f"{entry['suites']} graded suites ({missed:.0%}) {bar(missed, 'missed')}; a suite "
            "that misses it does not pass, whatever its kill rate.</p></div>")


PASSED_COLOUR, NOT_PASSED_COLOUR = "#2f8a4f", "#c2452f"


def histogram(scores: Sequence[dict], needed: int, total: int, required: str = "") -> str:
    """An inline SVG of how many graded suites killed how many mutants, each bar split by
    verdict (passed below, not passed above: a suite past the threshold still fails on a
    required mutant or the course tests), with the threshold drawn as a dashed line and a
    legend of the colours."""
    width, height, left, bottom, top = 560, 220, 34, 54, 14
    most = max((entry["suites"] for entry in scores), default=0) or 1
    step = (width - left - 8) / (total + 1)
    plot = height - bottom - top
    parts = [f"<svg id='spread' role='img' viewBox='0 0 {width} {height}' width='100%' "
             f"style='max-width:{width}px' xmlns='http://www.w3.org/2000/svg'>",
             f"<title>Graded suites by mutants killed; the threshold is {needed} of "
             f"{total}</title>",
             f"<line x1='{left}' y1='{height - bottom}' x2='{width - 8}' "
             f"y2='{height - bottom}' stroke='#888'/>",
             f"<text x='{left - 6}' y='{top + 4}' text-anchor='end'>{most}</text>",
             f"<text x='{left - 6}' y='{height - bottom}' text-anchor='end'>0</text>"]
    for entry in scores:
        killed, suites, passed = entry["killed"], entry["suites"], entry["passed"]
        x = left + killed * step + step * 0.12
        floor = height - bottom
        for count, colour, said in ((passed, PASSED_COLOUR, "passed"),
                                    (suites - passed, NOT_PASSED_COLOUR, "not passed")):
            if not count:
                continue
            tall = plot * count / most
            floor -= tall
            parts.append(f"<rect x='{x:.1f}' y='{floor:.1f}' width='{step * 0.76:.1f}' "
                         f"height='{tall:.1f}' fill='{colour}'><title>{count} of the suites "
                         f"that killed {killed} of {total}: {said}</title></rect>")
        if killed % 2 == 0 or total < 12:
            parts.append(f"<text x='{x + step * 0.38:.1f}' y='{height - bottom + 14}' "
                         f"text-anchor='middle'>{killed}</text>")
    mark = left + needed * step
    parts += [f"<line id='threshold' x1='{mark:.1f}' y1='{top - 6}' x2='{mark:.1f}' "
              f"y2='{height - bottom + 4}' stroke='#222' stroke-width='2' "
              "stroke-dasharray='5 3'/>",
              f"<text x='{mark + 4:.1f}' y='{top + 4}'>threshold: {needed} of {total}</text>",
              f"<text x='{(width + left) / 2:.0f}' y='{height - bottom + 32}' "
              "text-anchor='middle'>mutants killed</text>",
              f"<rect x='{left}' y='{height - 14}' width='12' height='12' "
              f"fill='{PASSED_COLOUR}'/><text x='{left + 16}' y='{height - 4}'>passed</text>",
              f"<rect x='{left + 80}' y='{height - 14}' width='12' height='12' "
              f"fill='{NOT_PASSED_COLOUR}'/><text x='{left + 96}' y='{height - 4}'>not passed "
              f"(too few kills, {html.escape(required)} survived, or course tests failed)"
              "</text></svg>"]
    return "".join(parts)


def submission_link(row) -> str:
    """A submission's name, linking to its page when it has one (its check.txt otherwise)."""
    name = html.escape(row.submission)
    page = "reports/mutation.html" if row.verdict.graded else "check.txt"
    return f"<a href='{name}/{page}'>{name}</a>"


def course_count(row, chapter: Chapter) -> str:
    """The course tests a row passed, as a person reads it: "9 of 11", or "" when none ran."""
    return "" if row.course_tests_passed is None else \
        f"{row.course_tests_passed} of {len(chapter.course_test_names)}"


def kills_cell(row, total: int) -> str:
    """What a submission's tests killed: nothing counted when its suite was refused."""
    if row.refused:
        return "<td class='n refused'>refused</td>"
    if row.mutants_killed is None:
        return "<td class='n'></td>"
    return f"<td class='n'>{row.mutants_killed} of {total}</td>"


def class_page(summary: dict, rows: Sequence, chapter: Chapter) -> str:
    """class.html: how many passed, the pitfalls the class missed most (the required one
    apart), how the kills spread against the threshold, the course tests the trees fail
    most, who was refused or not graded, and every submission."""
    verdicts = summary["verdicts"]
    total, needed = summary["mutants_planted"], summary["kills_needed"]
    suites = summary["graded_suites"]
    required = [entry for entry in summary["mutants"] if entry["required"]]
    others = sorted((entry for entry in summary["mutants"] if not entry["required"]),
                    key=lambda entry: (-entry["missed_by"], entry["id"]))

    def missed_row(entry: dict) -> str:
        missed = missed_share(entry)
        return (f"<tr><td>{entry['id']}</td><td>{html.escape(entry['pitfall'])}</td>"
                f"<td class='n'>{entry['missed_by']} of {entry['suites']}</td>"
                f"<td class='n'>{missed:.0%}</td><td>{bar(missed, 'missed')}</td></tr>")

    missed_head = ("<th>id</th><th>pitfall</th><th>suites that miss it</th><th>share</th>"
                   "<th></th>")
    course = [f"<tr><td>{breakable(entry['name'])}</td>"
              f"<td class='n'>{entry['failed_by']} of {entry['trees']}</td>"
              f"<td class='n'>{entry['share']:.0%}</td><td>{bar(entry['share'], 'missed')}</td>"
              "</tr>" for entry in summary["course_tests"]]
    refused = [f"<tr><td>{submission_link(row)}</td>"
               f"<td class='{row.verdict.css}'>{row.verdict}</td>"
               f"<td>{html.escape(row.refusal)}</td></tr>" for row in rows if row.refusal]
    everyone = [f"<tr><td>{submission_link(row)}</td>"
                f"<td class='{row.verdict.css}'>{row.verdict}</td>"
                f"<td class='n'>{course_count(row, chapter)}"
                f"</td>{kills_cell(row, total)}"
                f"<td>{row.required if row.graded else ''}</td>"
                f"<td class='n'>{row.seconds:.0f} s</td></tr>" for row in rows]
    headline = f"{verdicts[Verdict.PASSED]} of {summary['submissions']} submissions passed."
    line = (f"{verdicts[Verdict.NOT_PASSED]} not passed, {verdicts[Verdict.ERROR]} could not be "
            f"graded, {verdicts[Verdict.INTERNAL]} met a fault of ol (grade those again); "
            f"{suites} suites of tests valid and graded (a refused suite counts nowhere "
            f"below). The bar is "
            f"{chapter.threshold_percent}% ({needed} of {total} mutants) with the required mutant "
            "killed.")
    head = "<table><thead><tr>{}</tr></thead><tbody>"
    return "\n".join([
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{chapter.id}: the class</title>", f"<style>{STYLE}</style></head><body>",
        f"<h1>{chapter.id} {chapter.title}: the class</h1>",
        f"<p class='headline' id='passed'><b>{html.escape(headline)}</b></p>",
        f"<p id='summary'>{html.escape(line)}</p>",
        "<h2>The pitfalls the class missed most</h2>",
        *map(required_box, required),
        f"<div class='wide'>{head.format(missed_head)}",
        *map(missed_row, others), "</tbody></table></div>",
        "<h2>How the graded suites' kill rates spread</h2>",
        f"<p>Each bar counts the graded suites that killed that many of the {total} "
        f"mutants; the dashed line is the threshold, {needed} of {total}.</p>",
        histogram(summary["scores"], needed, total, chapter.required_names),
        "<h2>The course tests, most failed first</h2>",
        "<div class='wide'>" + head.format("<th>course test</th><th>trees that fail it</th>"
                                           "<th>share</th><th></th>"),
        *course, "</tbody></table></div>",
        "<h2>Refused or not graded</h2>",
        (f"<div class='wide'>{head.format('<th>submission</th><th>verdict</th><th>why</th>')}"
         + "".join(refused) + "</tbody></table></div>") if refused else "<p>None.</p>",
        "<h2>Every submission</h2>",
        "<div class='wide'>" + head.format(
            "<th>submission</th><th>verdict</th><th>course tests passed</th>"
            f"<th>mutants killed</th><th>{chapter.required_names}</th><th>time</th>"),
        *everyone, "</tbody></table></div>",
        "</body></html>"]) + "\n"
