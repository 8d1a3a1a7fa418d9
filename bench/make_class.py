"""Write a class of generated submissions for trying `ol grade` on, honest and broken.

Run from the repository's root::

    python bench/make_class.py OUT [--count 50]
    ol grade ds.07 OUT/* --out OUT-grades

Submission i takes variation ``i % len(VARIATIONS)``: copies of the two bundled examples,
and of the passing one with one thing changed: a planted mutant as the tree, a required
test dropped, a test that asserts what no correct tree does, a tree that does not import,
one that hangs, one that prints without end, a missing test file, no tests at all.
``OUT`` must not exist yet.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.chapter import find  # noqa: E402 - after the path is set
from harness.grade import catalog  # noqa: E402

PASSING = ROOT / "examples" / "passing"
FAILING = ROOT / "examples" / "failing"
TESTS = Path("tests") / "test_ds07_radix.py"
RADIX = Path("tl_ds") / "radix.py"


def read(example: Path, path: Path) -> str:
    return (example / path).resolve().read_text(encoding="utf-8")


def drop_test(tests: str, name: str) -> str:
    """``tests`` without the function ``name`` (up to the next top-level definition)."""
    return re.sub(rf"\ndef {name}\(.*?(?=\n(?:def |@|\Z))", "\n", tests, flags=re.S)


def variations() -> list[tuple[str, str | None, str | None]]:
    """(label, radix.py, test file) for each kind of submission; None leaves a file out."""
    tree, tests = read(PASSING, RADIX), read(PASSING, TESTS)
    mutants = {mutant.id: mutant.source for mutant in catalog.load_catalog(find("ds.07"))}
    hang = re.sub(r"(\n    def match_prefix\(self[^\n]*\n(?:        \"\"\".*?\"\"\"\n)?)",
                  r"\1        while True:\n            pass\n", tree, count=1, flags=re.S)
    noisy = re.sub(r"(\n    def insert\(self[^\n]*\n(?:        \"\"\".*?\"\"\"\n)?)",
                   r"\1        print('x' * 100_000)\n", tree, count=1, flags=re.S)
    return [
        ("passing", tree, tests),
        ("failing", read(FAILING, RADIX), read(FAILING, TESTS)),
        ("mutant-s11-tree", mutants["s11"], tests),
        ("mutant-m01-tree", mutants["m01"], tests),
        ("no-lock-test", tree, drop_test(tests, "test_locks_pin_ancestors")),
        ("wrong-test", tree, tests + "\n\ndef test_asks_too_much():\n"
                                     "    assert len(RadixTree(1)) == 1\n"),
        ("does-not-import", tree.replace("class RadixTree", "class RadixTree(", 1), tests),
        ("hangs", hang, tests),
        ("prints-a-lot", noisy, tests),
        ("no-test-file", tree, None),
        ("no-tests", tree, '"""Nothing yet."""\n'),
        ("passing-again", tree, tests),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--count", type=int, default=50)
    args = parser.parse_args()
    if args.out.exists():
        sys.exit(f"{args.out} exists: pass a new folder")
    kinds = variations()
    for number in range(args.count):
        label, tree, tests = kinds[number % len(kinds)]
        root = args.out / f"s{number + 1:02d}-{label}"
        (root / "tl_ds").mkdir(parents=True)
        (root / "tl_ds" / "__init__.py").write_text("", encoding="utf-8")
        if tree is not None:
            (root / RADIX).write_text(tree, encoding="utf-8")
        if tests is not None:
            (root / "tests").mkdir()
            (root / TESTS).write_text(tests, encoding="utf-8")
    print(f"{args.count} submissions in {args.out}")


if __name__ == "__main__":
    main()
