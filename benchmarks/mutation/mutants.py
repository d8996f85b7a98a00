"""Mutants of a Python module, made on its syntax tree: one small change each.

Operators (the classic set):

- comparison boundary and negation: `<` <-> `<=`, `>` <-> `>=`, `==` <-> `!=`,
  `is` <-> `is not`, `in` <-> `not in`
- arithmetic: `+` <-> `-` (also `+=` <-> `-=`)
- constants: an int or float `n` -> `n + 1` and `n - 1`; `True` <-> `False`
- boolean operators: `and` <-> `or`
- `not x` -> `x`
- return values: a boolean expression negated, any other value -> `None`

Strings, annotations, decorators and docstrings are left alone.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

SWAP_COMPARE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
SWAP_ARITH: dict[type[ast.operator], type[ast.operator]] = {ast.Add: ast.Sub, ast.Sub: ast.Add}
SYMBOL = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Add: "+",
    ast.Sub: "-",
    ast.And: "and",
    ast.Or: "or",
}


@dataclass(frozen=True)
class Mutant:
    path: str
    line: int
    scope: str
    """The top-level function or class the change is in (or `<module>`)."""
    change: str
    node: int
    """Index of the changed node in `ast.walk` order of the module's tree."""
    apply: Callable[[ast.AST, dict[int, tuple[ast.AST, str, int | None]]], None]

    def __str__(self) -> str:
        return f"{self.path}:{self.line} ({self.scope}) {self.change}"


def _skipped(tree: ast.Module) -> set[int]:
    """Ids of the nodes no operator touches: annotations, decorators, docstrings."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            roots.append(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            roots.extend(node.decorator_list)
            if node.returns is not None:
                roots.append(node.returns)
        if isinstance(node, ast.ClassDef):
            roots.extend(node.decorator_list)
        if isinstance(node, ast.ImportFrom):
            roots.append(node)
    return {id(n) for root in roots for n in ast.walk(root)}


def _scopes(tree: ast.Module, names: Sequence[str] | None) -> Iterator[tuple[str, ast.AST]]:
    for stmt in tree.body:
        name = getattr(stmt, "name", "<module>")
        if names is None or name in names:
            yield name, stmt


def _parents(tree: ast.AST) -> dict[int, tuple[ast.AST, str, int | None]]:
    out: dict[int, tuple[ast.AST, str, int | None]] = {}
    for parent in ast.walk(tree):
        for fieldname, value in ast.iter_fields(parent):
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, ast.AST):
                        out[id(child)] = (parent, fieldname, i)
            elif isinstance(value, ast.AST):
                out[id(value)] = (parent, fieldname, None)
    return out


def _is_bool_expr(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Compare | ast.BoolOp)
        or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not))
        or (isinstance(node, ast.Constant) and isinstance(node.value, bool))
        or (isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("bool", "any", "all"))
    )


def _operators(node: ast.AST) -> Iterator[tuple[str, Callable[..., None]]]:
    """(description, how to apply it to the node in a copy of the tree) per mutant."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            new = SWAP_COMPARE.get(type(op))
            if new is not None:

                def swap(n: ast.Compare, _p: object, i: int = i, new: type = new) -> None:
                    n.ops[i] = new()

                yield f"{SYMBOL[type(op)]!r} -> {SYMBOL[new]!r}", swap
    elif isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in SWAP_ARITH:
        new_op = SWAP_ARITH[type(node.op)]

        def arith(n: ast.BinOp, _p: object, new: type = new_op) -> None:
            n.op = new()

        yield f"{SYMBOL[type(node.op)]!r} -> {SYMBOL[new_op]!r}", arith
    elif isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And

        def boolop(n: ast.BoolOp, _p: object, new: type = other) -> None:
            n.op = new()

        yield f"{SYMBOL[type(node.op)]!r} -> {SYMBOL[other]!r}", boolop
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):

        def drop_not(n: ast.UnaryOp, parents: dict) -> None:
            parent, fieldname, index = parents[id(n)]
            if index is None:
                setattr(parent, fieldname, n.operand)
            else:
                getattr(parent, fieldname)[index] = n.operand

        yield "'not' removed", drop_not
    elif isinstance(node, ast.Constant):
        const = node.value
        if isinstance(const, bool):

            def flip(n: ast.Constant, _p: object) -> None:
                n.value = not n.value

            yield f"{const} -> {not const}", flip
        elif isinstance(const, int | float):
            for delta in (1, -1):

                def shift(n: ast.Constant, _p: object, new: float = const + delta) -> None:
                    n.value = new

                yield f"{const!r} -> {const + delta!r}", shift
    elif isinstance(node, ast.Return) and node.value is not None:
        returned = node.value
        if isinstance(returned, ast.Constant) and returned.value is None:
            return
        if _is_bool_expr(returned):

            def negate(n: ast.Return, _p: object) -> None:
                assert n.value is not None
                n.value = ast.UnaryOp(ast.Not(), n.value)

            yield "return value negated", negate
        else:

            def to_none(n: ast.Return, _p: object) -> None:
                n.value = ast.Constant(None)

            yield "return value -> None", to_none


def mutants_of(path: str, source: str, names: Sequence[str] | None = None) -> list[Mutant]:
    """Every mutant of the module at `path` (only in the top-level functions or classes
    named by `names`, when given)."""
    tree = ast.parse(source)
    skipped = _skipped(tree)
    index = {id(n): i for i, n in enumerate(ast.walk(tree))}
    docstrings = {
        id(stmt.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)
        for stmt in n.body[:1]
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
    }
    out: list[Mutant] = []
    for scope, root in _scopes(tree, names):
        for node in ast.walk(root):
            if id(node) in skipped or id(node) in docstrings:
                continue
            for change, apply in _operators(node):
                line = getattr(node, "lineno", 0)
                out.append(Mutant(path, line, scope, change, index[id(node)], apply))
    return sorted(out, key=lambda m: (m.line, m.node))


def mutated_source(source: str, mutant: Mutant) -> str:
    tree = copy.deepcopy(ast.parse(source))
    nodes = list(ast.walk(tree))
    mutant.apply(nodes[mutant.node], _parents(tree))
    return ast.unparse(ast.fix_missing_locations(tree))
