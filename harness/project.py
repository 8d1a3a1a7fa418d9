"""Where the project's own parts live: the reference, the model, the course tests, the mutants."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "impl" / "radix.py"
MODEL = ROOT / "model"
COURSE_TESTS = ROOT / "tests" / "course"
MUTANTS = ROOT / "mutants"
CATALOG = MUTANTS / "catalog.toml"
EQUIVALENTS = MUTANTS / "equivalent.toml"  # mutmut survivors that cannot change behaviour
SECOND = ROOT / "impl" / "second.py"  # a second correct tree, written apart from the reference
EXAMPLES = ROOT / "examples"
MODULES = ("ds.07",)

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


def reference_source() -> str:
    return REFERENCE.read_text(encoding="utf-8")
