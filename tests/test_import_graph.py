"""The layers of docs/architecture.md hold: what each package of worker/ may import, no
import cycles, and the engine never imports the HTTP edge."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: worker's packages (and top modules) -> the others they may import; the table of
#: docs/architecture.md. Standard library and third-party imports are not restricted.
ALLOWED = {
    "worker.losses": set(),
    "worker.catalogue": set(),
    "worker.errors": set(),
    "worker.stats": set(),
    "worker.blas": set(),
    "worker.settings": {"worker.errors"},
    "worker.result": {"worker.report", "worker.spec"},
    "worker.report": {"worker.data", "worker.errors", "worker.losses", "worker.problem",
                      "worker.settings", "worker.spec"},
    "worker.datasets": set(),
    "worker.kernels": {"worker.losses"},
    "worker.data": {"worker.errors", "worker.kernels", "worker.losses", "worker.settings",
                    "worker.stats"},
    "worker.spec": {"worker.catalogue", "worker.data", "worker.errors", "worker.losses"},
    "worker.problem": {"worker.blas", "worker.data", "worker.errors", "worker.kernels",
                       "worker.losses", "worker.settings", "worker.spec"},
    "worker.projection": {"worker.kernels", "worker.problem"},
    "worker.candidates": {"worker.errors", "worker.kernels", "worker.losses", "worker.problem",
                          "worker.stats"},
    "worker.distributed": {"worker.catalogue", "worker.data", "worker.errors", "worker.kernels",
                           "worker.problem", "worker.spec", "worker.losses", "worker.settings",
                           "worker.stats", "worker.tables"},
    # never worker.spec: the pipeline turns the spec into plain options (worker.pipeline.options)
    "worker.algorithms": {"worker.blas", "worker.candidates", "worker.catalogue",
                          "worker.distributed", "worker.errors", "worker.kernels",
                          "worker.losses", "worker.problem", "worker.projection",
                          "worker.stats"},
    "worker.pipeline": {"worker.algorithms", "worker.candidates", "worker.data", "worker.losses",
                        "worker.distributed", "worker.errors", "worker.model_types",
                        "worker.problem", "worker.projection", "worker.report", "worker.result",
                        "worker.settings", "worker.spec", "worker.stats", "worker.tables"},
    "worker.tables": {"worker.data", "worker.errors", "worker.kernels", "worker.losses",
                      "worker.problem", "worker.result", "worker.settings", "worker.spec"},
    "worker.model_types": {"worker.problem", "worker.result", "worker.spec", "worker.tables"},
    "worker.mixture": {"worker.errors", "worker.model_types", "worker.problem", "worker.report",
                       "worker.result", "worker.tables"},
    "worker.queue": {"worker.algorithms", "worker.errors", "worker.pipeline", "worker.problem",
                     "worker.projection", "worker.result", "worker.settings", "worker.spec"},
    "worker.commands": {"worker.algorithms", "worker.data", "worker.errors", "worker.losses",
                        "worker.mixture", "worker.model_types", "worker.pipeline",
                        "worker.report", "worker.result", "worker.settings", "worker.spec",
                        "worker.tables"},
    "worker": {"worker.kernel_cache", "worker.pipeline", "worker.result", "worker.spec"},
    "worker.kernel_cache": set(),
}


def module_name(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def imports(path: Path, known: set[str]) -> set[str]:
    """Project modules ``path`` imports, ``if TYPE_CHECKING:`` blocks included (a cycle only
    for the type checker is coupling all the same)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found.update(name for name in names if name in known)
    return found


def graph() -> dict[str, set[str]]:
    paths = [*ROOT.glob("worker/**/*.py"), *ROOT.glob("service/**/*.py")]
    known = {module_name(p) for p in paths}
    return {module_name(p): imports(p, known) - {module_name(p)} for p in paths}


def package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "worker" and len(parts) > 1 else \
        ("worker" if module == "worker" else parts[0])


def test_every_package_imports_only_the_layers_below_it():
    edges = graph()
    wrong = defaultdict(set)
    for module, targets in edges.items():
        source = package(module)
        if source == "service":
            continue
        assert source in ALLOWED, f"{module}: add its package to the layer table"
        for target in targets:
            if package(target) != source and package(target) not in ALLOWED[source]:
                wrong[module].add(target)
    assert not wrong, dict(wrong)


def test_the_engine_never_imports_the_http_edge():
    assert not {m for m, targets in graph().items()
                if m.startswith("worker") and any(t.startswith("service") for t in targets)}


def test_there_are_no_import_cycles():
    edges, state, cycles = graph(), {}, []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(edges[module]):
            if state.get(target) == "open":
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert not cycles, cycles
