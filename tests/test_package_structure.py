"""The package's shape: no import circle inside `hindsight`, and no pipeline stage importing another
(what passes between stages is a core record)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hindsight"
STAGES = ("distill", "train", "eval", "rl")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The hindsight modules a file imports, at any depth of the file (lazy imports count too)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            # `from hindsight.x import y` names module hindsight.x.y or a member of hindsight.x
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    files = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    modules = set(files)
    return {name: imported_modules(path, modules) - {"hindsight"} for name, path in files.items()}


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (circle := visit(nxt)):
                return circle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (circle := visit(node)):
            return circle
    return None


def test_the_circle_finder_finds_a_planted_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_circle(graph) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set()}) is None


def test_the_graph_sees_relative_and_lazy_imports():
    graph = import_graph()
    assert "hindsight.leaks" in graph["hindsight.distill.judge"]
    assert len(graph) > 50


def test_no_import_circle_in_the_package():
    assert find_circle(import_graph()) is None


def test_no_stage_imports_another():
    crossings = [
        (module, target)
        for module, targets in import_graph().items()
        for target in targets
        if (stage := module.split(".")[1]) in STAGES and (other := target.split(".")[1]) in STAGES and other != stage
    ]
    assert crossings == []
