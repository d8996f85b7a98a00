"""One vocabulary of exit codes and outcomes: `mmcli.errors.ExitCode` and `Outcome`.

The source is read with `ast`: an exit code written as a bare number anywhere in mmcli
(`sys.exit(4)`, `typer.Exit(1)`, `RecordResult(4, ...)`, `exit_code = 3`, a function
returning an exit code that returns `0`) fails here, naming the file and line.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from mmcli.errors import ExitCode, MMError, Outcome

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "mmcli"

EXIT_CALLS = {"exit", "_exit", "Exit", "SystemExit", "quit"}
"""Functions whose first argument is an exit code: sys.exit, os._exit, typer.Exit..."""
EXIT_NAMES = {"exit_code", "returncode", "code"}
"""Variables, attributes, keywords and dataclass fields that hold an exit code."""
EXEMPT = {"errors.py"}
"""Where the numbers are defined."""


def _ints(node: ast.AST) -> list[int]:
    """The int literals anywhere in an expression (True and False are not exit codes)."""
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and type(n.value) is int]


def _bare(node: ast.AST) -> bool:
    """The expression's value may be an int literal: `4`, `1 if failed else 0`, `x or 1`."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.IfExp):
        return _bare(node.body) or _bare(node.orelse)
    if isinstance(node, ast.BoolOp):
        return any(_bare(v) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return _bare(node.operand)
    return False


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _dataclass_fields(trees: dict[Path, ast.Module]) -> dict[str, list[str]]:
    """Each dataclass in mmcli: its fields in order (what positional arguments bind to)."""
    fields: dict[str, list[str]] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            decorators = {
                _name(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list
            }
            if "dataclass" not in decorators:
                continue
            fields[node.name] = [
                s.target.id
                for s in node.body
                if isinstance(s, ast.AnnAssign)
                and isinstance(s.target, ast.Name)
                and "ClassVar" not in ast.unparse(s.annotation)
            ]
    return fields


def _returns_exit_code(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    annotation = ast.unparse(fn.returns) if fn.returns is not None else ""
    return "exit" in fn.name.lower() or "ExitCode" in annotation


def _own_returns(fn: ast.AST) -> Iterator[ast.Return]:
    """The return statements of `fn` itself, not of functions defined inside it."""
    for child in ast.iter_child_nodes(fn):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(child, ast.Return):
            yield child
        yield from _own_returns(child)


def bare_exit_codes(trees: dict[Path, ast.Module]) -> list[str]:
    fields = _dataclass_fields(trees)
    found: list[str] = []
    for path, tree in trees.items():
        where = path.relative_to(ROOT)

        def flag(node: ast.AST, what: str, *, _where: Path = where) -> None:
            found.append(f"{_where}:{getattr(node, 'lineno', '?')}: {what}")

        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                callee = _name(node.func)
                if callee in EXIT_CALLS and node.args and _bare(node.args[0]):
                    flag(node, f"{ast.unparse(node)}")
                for kw in node.keywords:
                    if kw.arg in EXIT_NAMES and _bare(kw.value):
                        flag(node, f"{kw.arg}={ast.unparse(kw.value)}")
                for name, arg in zip(fields.get(callee or "", []), node.args, strict=False):
                    if name in EXIT_NAMES and _bare(arg):
                        flag(node, f"{callee}({name}={ast.unparse(arg)}, ...)")
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    pairs: list[tuple[ast.AST, ast.AST | None]] = [(target, node.value)]
                    if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                        pairs = list(zip(target.elts, node.value.elts, strict=False))
                    for t, v in pairs:
                        if _name(t) in EXIT_NAMES and v is not None and _bare(v):
                            flag(node, f"{ast.unparse(t)} = {ast.unparse(v)}")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                _returns_exit_code(node)
            ):
                for ret in _own_returns(node):
                    if ret.value is not None and _ints(ret.value):
                        flag(ret, f"{node.name}() returns {ast.unparse(ret.value)}")
    return found


@functools.cache
def _parsed() -> dict[Path, ast.Module]:
    return {
        path: ast.parse(path.read_text(encoding="utf-8"), str(path))
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name not in EXEMPT
    }


def _trees() -> dict[Path, ast.Module]:
    return dict(_parsed())


def test_no_exit_code_is_a_bare_number() -> None:
    found = bare_exit_codes(_trees())
    assert not found, "exit codes as bare numbers (use mmcli.errors.ExitCode):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "import sys\nsys.exit(3)",
        "import typer\nraise typer.Exit(1)",
        "raise SystemExit(130)",
        "def main() -> None:\n    raise typer.Exit(1 if failed else 0)",
        "result.exit_code = 4",
        "outcome, exit_code = 'diverged', 3",
        "RowResult(1, {}, 'error', 1, 'x')",
        "LLMResult('x', exit_code=5)",
        "def exit_code(x) -> int:\n    return {1: 3}.get(x, 0)",
        "def run(args) -> ExitCode | None:\n    return 1",
        "def outcome_exit(rows) -> int:\n    return next((r for r in rows), 0)",
    ],
)
def test_the_check_sees_a_bare_exit_code(source: str) -> None:
    trees = {PACKAGE / "replay" / "batch.py": _parsed()[PACKAGE / "replay" / "batch.py"]}
    assert not bare_exit_codes(trees)
    trees[PACKAGE / "injected.py"] = ast.parse(source)  # RowResult's 4th field: exit_code
    assert bare_exit_codes(trees), source


def test_exit_codes_are_the_documented_ones() -> None:
    """The README's exit-code table lists exactly `ExitCode`, and each outcome keeps its
    code (scripts depend on them)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Exit codes", 1)[1].split("\n\n", 2)[1]
    documented = {int(code) for code in re.findall(r"^\| (\d+) \|", table, re.M)}
    assert documented == {int(c) for c in ExitCode}
    assert {o: int(o.exit_code) for o in Outcome if o.exit_code is not ExitCode.OK} == {
        Outcome.DIVERGED: 3,
        Outcome.AGENT_FAILED: 4,
        Outcome.NOT_RECORDED: 4,
        Outcome.NOT_SAVED: 5,
        Outcome.OUTCOME_DIFFERS: 6,
        Outcome.HEALED_PENDING: 6,
        Outcome.ABORTED: 130,
    }
    assert (ExitCode.OK, ExitCode.ERROR, ExitCode.USAGE) == (0, 1, 2)


def test_every_error_has_a_documented_exit_code() -> None:
    def subclasses(cls: type[MMError]) -> Iterator[type[MMError]]:
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    import mmcli.sdk.errors  # noqa: F401  (its errors are MMErrors too)

    for cls in [MMError, *subclasses(MMError)]:
        assert isinstance(cls.exit_code, ExitCode), cls


def test_errors_become_messages_in_one_place() -> None:
    """`mm: error:` is written by `cli.output.fail` (and the parser's one-line usage error); the
    only others are the fast `mm act` path and the xdotool shim, which load no CLI."""
    allowed = {
        ("mmcli/cli/output.py", "fail"),
        ("mmcli/cli/parser.py", "show"),
        ("mmcli/cli/fastact.py", "run"),
        ("mmcli/hook/_mm_xdotool.py", "main"),
    }
    writers = set()
    for path, tree in _trees().items():
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value.startswith("mm: error")
                for node in ast.walk(fn)
            ):
                writers.add((str(path.relative_to(ROOT)), fn.name))
    assert writers <= allowed, writers - allowed
    assert ("mmcli/cli/output.py", "fail") in writers
