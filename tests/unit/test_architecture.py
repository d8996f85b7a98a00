"""docs/architecture.md stays true: its table of module groups is compared with the real
import graph of mmcli (built with `ast`), and the imports form no cycle."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "mmcli"
DOC = ROOT / "docs" / "architecture.md"


@functools.cache
def modules() -> dict[str, Path]:
    """Every module of mmcli by dotted name (a package by its own name)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _targets(name: str, node: ast.Import | ast.ImportFrom, is_package: bool) -> list[str]:
    """The mmcli modules an import statement in `name` loads."""
    known = modules()
    if isinstance(node, ast.Import):
        wanted = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            here = name.split(".") if is_package else name.split(".")[:-1]
            here = here[: len(here) - (node.level - 1)]
            base = ".".join([*here, base] if base else here)
        wanted = [
            f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
            for alias in node.names
        ]
    out = []
    for target in wanted:
        # `import mmcli.x.y` runs mmcli/x/__init__.py first (not one's own package's).
        for loaded in [*_parents(target), target]:
            if loaded in known and loaded != name and loaded not in _parents(name):
                out.append(loaded)
    return out


@functools.cache
def import_graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module-level imports, imports inside functions) of each module; imports under
    `if TYPE_CHECKING:` are left out (they never run)."""
    top: dict[str, set[str]] = {}
    inner: dict[str, set[str]] = {}
    for name, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        top[name], inner[name] = set(), set()
        is_package = path.name == "__init__.py"

        def visit(
            node: ast.AST, in_function: bool, name: str = name, pkg: bool = is_package
        ) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    for rest in child.orelse:
                        visit(rest, in_function)
                    continue
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    (inner if in_function else top)[name].update(_targets(name, child, pkg))
                nested = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                visit(child, in_function or nested)

        visit(tree, False)
    return top, inner


def _components(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of `edges` (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            out.append(component)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def _path(edges: dict[str, set[str]], start: str, end: str, within: set[str]) -> list[str]:
    """A shortest path from `start` to `end` inside `within` (breadth first)."""
    came: dict[str, str | None] = {start: None}
    todo = [start]
    while todo:
        node = todo.pop(0)
        if node == end:
            path = [node]
            while came[path[-1]] is not None:
                path.append(came[path[-1]])  # type: ignore[arg-type]
            return path[::-1]
        for nxt in sorted(edges.get(node, ())):
            if nxt in within and nxt not in came:
                came[nxt] = node
                todo.append(nxt)
    return []


def find_cycle(edges: dict[str, set[str]]) -> list[str]:
    """An import cycle as a path (its first module repeated at the end), or [] if none."""
    for component in _components(edges):
        for a in sorted(component):
            for b in sorted(edges.get(a, set()) & component):
                return [a, *_path(edges, b, a, component)]
    return []


# ---- the document's table --------------------------------------------------------------


def parse_groups(text: str) -> tuple[dict[str, list[str]], dict[str, set[str]]]:
    """From the "Module groups" table: each group's module patterns, and the groups it
    may import."""
    section = text.split("## Module groups", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]
    members: dict[str, list[str]] = {}
    may: dict[str, set[str]] = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        group, listed, _owns, imports = cells[0], cells[1], cells[2], cells[-1]
        members[group] = re.findall(r"`([\w.*]+)`", listed)
        may[group] = {g.strip() for g in imports.split(",") if g.strip() not in ("", "—")}
    return members, may


def group_of(members: dict[str, list[str]]) -> tuple[dict[str, str], list[str]]:
    """Each module's group, and the problems: a module in no group, or in two."""
    owner: dict[str, str] = {}
    problems = []
    for module in modules():
        short = module.removeprefix("mmcli.") if module != "mmcli" else "mmcli"
        hits = [
            group
            for group, patterns in members.items()
            for p in patterns
            if short == p or (p.endswith(".*") and (short == p[:-2] or short.startswith(p[:-1])))
        ]
        if len(hits) != 1:
            problems.append(f"{module} is in {len(hits)} groups of docs/architecture.md")
        else:
            owner[module] = hits[0]
    return owner, problems


def layering_violations(
    owner: dict[str, str], may: dict[str, set[str]], edges: dict[str, set[str]]
) -> list[str]:
    out = []
    for a, targets in sorted(edges.items()):
        for b in sorted(targets):
            ga, gb = owner[a], owner[b]
            if ga != gb and gb not in may[ga]:
                out.append(f"{a} ({ga}) imports {b} ({gb}); {ga} may import: {sorted(may[ga])}")
    return out


def _all_edges() -> dict[str, set[str]]:
    top, inner = import_graph()
    return {m: top[m] | inner[m] for m in top}


# ---- the tests --------------------------------------------------------------------------


def test_no_import_cycle_at_module_level() -> None:
    cycle = find_cycle(import_graph()[0])
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_no_import_cycle_even_inside_functions() -> None:
    cycle = find_cycle(_all_edges())
    assert not cycle, "import cycle (imports inside functions counted): " + " -> ".join(cycle)


def test_every_module_is_in_one_group() -> None:
    members, may = parse_groups(DOC.read_text(encoding="utf-8"))
    assert len(members) >= 8 and all(members.values())
    assert all(g in members for targets in may.values() for g in targets), may
    _, problems = group_of(members)
    assert not problems, "\n".join(problems)


def test_imports_follow_the_documented_layering() -> None:
    members, may = parse_groups(DOC.read_text(encoding="utf-8"))
    owner, _ = group_of(members)
    violations = layering_violations(owner, may, _all_edges())
    assert not violations, "\n".join(violations)


def test_every_module_says_what_it_owns() -> None:
    silent = [m for m, p in modules().items() if not ast.get_docstring(ast.parse(p.read_text()))]
    assert not silent, f"modules without a docstring: {silent}"


def where(module: str) -> str:
    return str(modules()[module].relative_to(ROOT))


def subpackages() -> list[str]:
    return sorted(m for m, p in modules().items() if p.name == "__init__.py" and m != "mmcli")


def declared_imports(package: str, owner: dict[str, str]) -> set[str] | None:
    """The groups a subpackage's docstring names after "May import:" (backticked modules
    and subpackages by their group, "the vocabulary", "everything", "nothing")."""
    doc = ast.get_docstring(ast.parse(modules()[package].read_text())) or ""
    line = re.search(r"^May import: (.*(?:\n(?!\n).*)*)", doc, re.MULTILINE)
    if line is None:
        return None
    said = line.group(1)
    if said.startswith("everything"):
        return set(owner.values()) - {owner[package]}
    groups = {"vocabulary"} if "vocabulary" in said else set()
    for name in re.findall(r"`([\w.]+)`", said):
        groups.add(owner[f"mmcli.{name}"])
    return groups - {owner[package]}  # its own group's modules it imports freely


def test_each_subpackage_is_one_group_and_says_what_it_may_import() -> None:
    members, may = parse_groups(DOC.read_text(encoding="utf-8"))
    owner, _ = group_of(members)
    problems = []
    for package in subpackages():
        groups = {owner[m] for m in modules() if m == package or m.startswith(package + ".")}
        if len(groups) != 1:
            problems.append(f"{package}'s modules are in groups {sorted(groups)}")
            continue
        declared = declared_imports(package, owner)
        (group,) = groups
        if declared is None:
            problems.append(f"{where(package)} does not say what it may import")
        elif declared != may[group]:
            problems.append(
                f"{where(package)} may import {sorted(declared)}, "
                f"docs/architecture.md says {sorted(may[group])}"
            )
    assert len(subpackages()) >= 10
    assert not problems, "\n".join(problems)


# ---- the checks can fail ------------------------------------------------------------------


def test_a_cycle_is_found_and_named() -> None:
    edges = {
        "mmcli.store.recordings": {"mmcli.inventory.catalog"},
        "mmcli.inventory.catalog": {"mmcli.sdk.document"},
    }
    edges["mmcli.sdk.document"] = {"mmcli.store.recordings"}
    assert find_cycle(edges) == [
        "mmcli.inventory.catalog",
        "mmcli.sdk.document",
        "mmcli.store.recordings",
        "mmcli.inventory.catalog",
    ]
    del edges["mmcli.sdk.document"]
    assert find_cycle(edges) == []


def test_a_function_level_import_counts_for_the_layering() -> None:
    source = "def f():\n    from mmcli.inventory.catalog import tree\n"
    tree = ast.parse(source)
    node = tree.body[0].body[0]  # type: ignore[attr-defined]
    assert _targets("mmcli.store.recordings", node, False) == [
        "mmcli.inventory",
        "mmcli.inventory.catalog",
    ]
    members, may = parse_groups(DOC.read_text(encoding="utf-8"))
    owner, _ = group_of(members)
    assert layering_violations(owner, may, {"mmcli.store.recordings": {"mmcli.inventory.catalog"}})


def test_importing_a_submodule_counts_its_package() -> None:
    node = ast.parse("from mmcli.sdk.document import summary").body[0]
    assert isinstance(node, ast.ImportFrom)
    assert _targets("mmcli.inventory.catalog", node, False) == ["mmcli.sdk", "mmcli.sdk.document"]
    assert _targets("mmcli.sdk.engine", node, False) == ["mmcli.sdk.document"]


def test_a_module_in_two_groups_or_none_is_reported() -> None:
    text = DOC.read_text(encoding="utf-8")
    members, _ = parse_groups(
        text.replace("| `errors`, `model`, `params`, `pace` |", "| `model`, `params`, `pace` |")
    )
    assert any("mmcli.errors is in 0 groups" in p for p in group_of(members)[1])
    members, _ = parse_groups(
        text.replace("| `errors`, `model`,", "| `errors`, `store.recordings`, `model`,")
    )
    assert any("mmcli.store.recordings is in 2 groups" in p for p in group_of(members)[1])


def test_every_folder_is_a_package_so_that_the_wheel_ships_it() -> None:
    """setuptools' package finder skips a folder without `__init__.py` (its modules would
    be missing from an installed mm while every test in the checkout passes)."""
    folders = {p.parent for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    assert [f for f in folders if not (f / "__init__.py").is_file()] == []


REPLAY_CLASS_LINES = 300
REPLAY_MODULE_LINES = 400
CLASS_LINES = 300
MODULE_LINES = 600


def too_big(paths: list[Path], module_lines: int, class_lines: int) -> list[str]:
    """The modules among `paths` over `module_lines` lines, and their classes over
    `class_lines`."""
    found = []
    for path in paths:
        text = path.read_text()
        name = path.relative_to(PACKAGE)
        if len(text.splitlines()) > module_lines:
            found.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                size = node.end_lineno - node.lineno + 1
                if size > class_lines:
                    found.append(f"{name}: class {node.name} of {size} lines")
    return found


def test_the_replay_core_is_in_parts() -> None:
    """No class of `replay/` over 300 lines and no module over 400: the replayer is its
    parts (tree, screens, judge, look, act, divergence, handover, journal) and a walk."""
    paths = sorted((PACKAGE / "replay").glob("*.py"))
    assert not too_big(paths, REPLAY_MODULE_LINES, REPLAY_CLASS_LINES)


def test_no_class_over_300_lines_and_no_module_over_600() -> None:
    """Anywhere in mm: a class or a module that grows past these is split into parts, each
    with its own name and tests (the recorder, the codec and the step builder were)."""
    assert not too_big(sorted(PACKAGE.rglob("*.py")), MODULE_LINES, CLASS_LINES)


def test_a_run_is_opened_by_its_verb_alone() -> None:
    """Only `verbs/` opens a run (`store.lifecycle.begin`): `replay/` walks a recording the
    replay verb loaded in a run it opened, `capture/` records into a run the record verb
    opened, `llm/` records and replays model API calls in runs the verbs opened, the
    fleet worker runs a row through the replay verb, and the SDK's `Engine` asks
    `verbs.sdk` for each call's run. `replay/` neither records a missing name nor reads
    one. (`store/` itself holds a name free to remove or rename it: no run.)"""
    openers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith(("verbs/", "store/")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "mmcli.store.lifecycle"
                and any(a.name == "begin" for a in node.names)
            ):
                openers.append(f"{where}: imports begin")
            if (
                where.startswith("replay/")
                and isinstance(node, ast.Attribute)
                and node.attr in ("load", "exists")
                and isinstance(node.value, ast.Name)
                and node.value.id == "store"
            ):
                openers.append(f"{where}:{node.lineno}: store.{node.attr}")
    assert not openers


def test_only_the_store_knows_where_its_bytes_live() -> None:
    """Outside `store/`, a store is names, keys and bytes: nobody branches on where its
    bytes live (`Store.local`, gone) or builds a path under it (`Store.root`, `Store.path`).
    What needs a local path asks `Store.folder` (None for a bucket): the doctor's probe
    of the folder, the healing agent's sandbox."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith("store/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("local", "root", "path", "index_path")
                and "store" in ast.unparse(node.value).lower()
            ):
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    assert not found


def _listed_modules() -> dict[str, set[str]]:
    """The modules docs/architecture.md's layout block names, by package ("" for the
    top level): after a package's description (up to its last ":"), parenthesised
    notes left out."""
    block = DOC.read_text().split("    mmcli/\n", 1)[1].split("\n\n", 1)[0]
    listed: dict[str, set[str]] = {}
    package = ""
    for line in block.splitlines():
        entry = re.match(r"      ([a-z]+)/\s+(.*)", line)
        if entry:
            package, text = entry.groups()
        elif line.startswith("      ") and ".py" in line:
            package, text = "", " ".join(w[:-3] for w in line.split() if w.endswith(".py"))
        else:
            text = line.strip()
        text = re.sub(r"\([^)]*\)", "", text)
        text = text.rsplit(":", 1)[-1]
        listed.setdefault(package, set()).update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    return listed


def test_the_layout_names_every_module_and_no_other() -> None:
    """The module list in docs/architecture.md is the package as it is: a module moved
    or added shows here (the list named `replay/agents`, moved to `desktop/allowed`)."""
    listed = _listed_modules()
    real: dict[str, set[str]] = {}
    for name in modules():
        parts = name.split(".")
        if len(parts) == 2 and (PACKAGE / f"{parts[1]}.py").exists():
            real.setdefault("", set()).add(parts[1])
        elif len(parts) == 3:
            real.setdefault(parts[1], set()).add(parts[2])
    real[""].discard("__main__")
    assert set(listed) == set(real), "packages listed and packages there differ"
    for package, names in real.items():
        assert listed[package] == names, (
            f"mmcli/{package}: listed but not there {sorted(listed[package] - names)}, "
            f"there but not listed {sorted(names - listed[package])}"
        )
