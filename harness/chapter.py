"""Everything specific to ds.07: where its parts live, the tree's names, the course's rules.

User-facing counts (how many course tests, how many mutants) are derived from what these
name, never written out: the mutants are whatever ``mutants/catalog.toml`` lists.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "impl" / "radix.py"
MODEL = ROOT / "model"
COURSE_TESTS = ROOT / "tests" / "course"
MUTANTS = ROOT / "mutants"
CATALOG = MUTANTS / "catalog.toml"
EQUIVALENTS = MUTANTS / "equivalent.toml"  # mutmut survivors that cannot change behaviour
EXAMPLES = ROOT / "examples"
# the second correct tree is the passing example's: written apart from the reference, as a
# student would write one
SECOND = EXAMPLES / "passing" / "tl_ds" / "radix.py"
THIRD = ROOT / "impl" / "third.py"  # a third, making each open choice unlike the other two
# The correct trees a student's tests must pass on, as the reports name them: no test may
# rest on a choice the contract leaves open (which id a new node gets, which freed id
# comes back, an unlock of a node pinned only from below).
CORRECT_TREES = (("the reference", REFERENCE), ("the second correct tree", SECOND),
                 ("the third correct tree", THIRD))
ID = "ds.07"  # what a user types: `ol check ds.07`
COMPACT_ID = ID.replace(".", "")  # in names that take no dot: "ds07"
TITLE = "radix tree"  # what pages call it: "ds.07 radix tree"
MODULES = (ID,)
STUB = ROOT / "impl" / "stub.py"  # the tree `ol start` writes: every method raises
# a workspace's tests, and the course's: the file, the state machine, and the views the
# tree side runs for the machine (functions of a tree, reached through the proxy)
STUDENT_TESTS = Path("tests") / "test_ds07_radix.py"
COURSE_TEST_FILE = COURSE_TESTS / "test_ds07_radix.py"
COURSE_MACHINE = COURSE_TESTS / "ds07_machine.py"
COURSE_VIEWS = COURSE_TESTS / "ds07_observe.py"
MODEL_TEST = "test_model_based_against_a_naive_map"  # the course test ol audit --seeds runs

COURSE_TEST_NAMES = (
    "test_hand_example_split_and_match",
    "test_granule_matches_whole_runs_only",
    "test_reinserting_hands_every_value_back",
    "test_lru_order_follows_last_use",
    "test_a_childless_parent_becomes_evictable",
    "test_locks_pin_the_path",
    "test_a_split_inherits_the_locks_below_it",
    "test_unlock_without_a_lock_panics",
    "test_insert_needs_one_value_per_granule",
    "test_freed_slots_are_reused",
    "test_model_based_against_a_naive_map",
)


# The tree's public methods and properties, as the contract names them (the placebo
# breaks every one of them; the stub and the proxy offer exactly these).
METHODS = ("__init__", "__len__", "is_empty", "node_count", "key", "values", "parent",
           "children", "child_count", "lock_count", "lru_order", "match_prefix", "insert",
           "lock", "unlock", "evict")
PROPERTIES = ("granule",)

# The rung (R3): the student's tests must hold these six, kill the required mutants, and
# kill THRESHOLD_PERCENT of all the planted mutants.
REQUIRED_TESTS = tuple(f"test_{name}" for name in (
    "split_by_hand",
    "match_splits_inside_an_edge",
    "insert_hands_back_the_stored_part",
    "oldest_leaf_goes_first",
    "locks_pin_ancestors",
    "parent_becomes_evictable",
))
THRESHOLD_PERCENT = 70
REQUIRED_MUTANTS = ("s11",)  # the catalog marks exactly these required
REQUIRED_PITFALL = "a locked leaf stays on the eviction list"  # what s11 plants
REQUIRED_TEST_HINT = "add a test that a locked leaf is never evicted"
REQUIRED_NAMES = " and ".join(REQUIRED_MUTANTS)  # how the text names them: "s11"


def reference_source() -> str:
    return REFERENCE.read_text(encoding="utf-8")


# The file `ol start` writes for the student's tests, filled in with the rung's numbers.
TESTS_TEMPLATE = '''"""My tests of tl_ds.radix (ds.07, rung R3), graded by the mutants they kill.

Import only `from tl_ds.radix import RadixTree, NodeId, ROOT`. `ol check ds.07` needs these
six tests; together your tests must kill at least {percent}% of the {total} planted mutants,
and {required} ({pitfall}) among them:

{names}

Write them, run `ol tdd red ds.07` (every test must fail on the stub), implement
tl_ds/radix.py, then `ol tdd green ds.07` and `ol check ds.07`.
"""
'''
