"""A static scan of a student's test file for what has no place in a test of this chapter.

The chapter's tests build trees and assert on what they return. Anything that reaches
for the grader instead (pytest hooks and plugins, ending the interpreter, reading the
implementation's source or code objects, tampering with imports, processes, sockets,
files, the environment, signals) is flagged with its line. The scan is a lint: by
default a flagged suite is graded as usual and its findings are shown to staff as
warnings (what keeps a test from the grader is the sandbox); ``--refuse-flagged`` refuses
it instead. The scan works on the syntax tree, so aliases (``import os as o``)
and ``from`` imports are seen too; what it cannot see statically (a name built at run
time) it flags as dynamic.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from dataclasses import dataclass

from harness.grade.syntax import parse

ALLOWED_MODULES = {
    "__future__", "abc", "array", "bisect", "collections", "contextlib", "copy",
    "dataclasses", "enum", "functools", "heapq", "hypothesis", "itertools", "math",
    "operator", "pytest", "random", "re", "string", "textwrap", "time", "typing",
}  # and the modules of the chapter graded, and of the chapters it builds on
DYNAMIC_BUILTINS = {"__import__", "breakpoint", "compile", "eval", "exec", "globals",
                    "input", "locals", "open", "vars"}
ALLOWED_DUNDERS = {"__class__", "__doc__", "__eq__", "__init__", "__len__", "__name__",
                   "__qualname__", "__repr__"}
PYTEST_EXITS = {"exit"}
FIXTURES = {"monkeypatch", "pytestconfig", "request"}  # they reach pytest's configuration


@dataclass(frozen=True)
class Flag:
    line: int
    what: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}"


def scan(source: str, modules: Collection[str]) -> list[Flag]:
    """Every flag in ``source``, in line order (none when it does not parse: the run says).
    ``modules``: what a test of the chapter may import of the students' code (its own
    module and those of the chapters it builds on), with their packages."""
    try:
        tree = parse(source)
    except SyntaxError:
        return []
    flags: list[Flag] = []

    def flag(node: ast.AST, what: str) -> None:
        flags.append(Flag(getattr(node, "lineno", 0), what))

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                node.name.startswith("pytest_"):
            flag(node, f"defines the pytest hook {node.name}")
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign | ast.AugAssign) else []
        for target in targets:
            if isinstance(target, ast.Name) and target.id == "pytest_plugins":
                flag(node, "loads pytest plugins (pytest_plugins)")
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for argument in node.args.args + node.args.kwonlyargs:
                if argument.arg in FIXTURES:
                    flag(node, f"asks for the {argument.arg} fixture, which reaches pytest "
                               "itself")
        if isinstance(node, ast.Import):
            for alias in node.names:
                check_module(alias.name, node, flag, modules)
        elif isinstance(node, ast.ImportFrom):
            check_module(node.module or "", node, flag, modules, relative=node.level > 0)
            if node.module == "pytest":
                for alias in node.names:
                    if alias.name in PYTEST_EXITS:
                        flag(node, "imports pytest.exit, which ends the test session")
        elif isinstance(node, ast.Attribute):
            if node.attr in PYTEST_EXITS and isinstance(node.value, ast.Name) and \
                    node.value.id == "pytest":
                flag(node, "calls pytest.exit, which ends the test session")
            elif node.attr.startswith("__") and node.attr.endswith("__") and \
                    node.attr not in ALLOWED_DUNDERS:
                flag(node, f"reaches into {node.attr}, an object's internals")
        elif isinstance(node, ast.Name) and node.id in DYNAMIC_BUILTINS:
            flag(node, f"uses {node.id}(), which a test of this chapter has no need for")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("getattr", "setattr", "delattr", "hasattr"):
            name = node.args[1] if len(node.args) > 1 else None
            if not isinstance(name, ast.Constant) or not isinstance(name.value, str):
                flag(node, f"calls {node.func.id} with a name built at run time")
            elif name.value.startswith("__"):
                flag(node, f"reaches into {name.value} through {node.func.id}")
    return sorted(set(flags), key=lambda item: (item.line, item.what))


def allowed(modules: Collection[str]) -> str:
    return ", ".join(sorted((ALLOWED_MODULES - {"__future__"}) | set(modules)))


def check_module(name: str, node: ast.AST, flag, modules: Collection[str],
                 relative: bool = False) -> None:
    top = name.split(".", 1)[0]
    packages = {module.rsplit(".", 1)[0] for module in modules if "." in module}
    students = {module.split(".", 1)[0] for module in modules}
    if relative:
        flag(node, "imports from a relative module, which the graded copy does not have")
    elif top in students:
        if name not in set(modules) | packages:
            flag(node, f"imports {name}: a test imports {' or '.join(sorted(modules))} only")
    elif top not in ALLOWED_MODULES:
        flag(node, f"imports {name}, which a test of this chapter has no use for")
