"""Every cross-reference resolves: ``:mod:``/``:func:``/``:class:``/``:meth:`` (and
``:data:``/``:attr:``) roles in the docstrings of worker/, service/ and lighttouch/ name
something importable; every relative link of docs/*.md and README.md names a file of the
repository (and a heading of it, when it names one); every ``docs/page.md#heading`` the code
points to names a page and one of its headings, and none cites a README section the README
no longer has; every test file the pages name exists; every ``pip install`` of LightTouch
installs it from the repository or its wheel (no index has it) with extras it defines."""

from __future__ import annotations

import ast
import builtins
import importlib
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROLE = re.compile(r":(mod|func|class|meth|data|attr):`([^`]+)`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MODULES = sorted(p for package in ("worker", "service", "lighttouch")
                 for p in (ROOT / package).rglob("*.py"))
PAGES = sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"])
DOCS_POINTER = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")
README_SECTION = re.compile(r'README\s+"([^"]+)"')
TEST_FILE = re.compile(r"`(tests/[\w/]+\.py)(?:::\w+)?`")
#: What ``pip install`` names as LightTouch: by name, the repository (``.``) or its wheel,
#: each with its ``[extras]``.
INSTALLED = re.compile(r"pip install[^\n`]*?'?(lighttouch|\.|[\w./-]*lighttouch-[\w.-]+\.whl)"
                       r"\[([\w,-]+)\]")
#: Modules that still cite a README section since moved to docs/: each with where it went.
#: The test fails once one no longer does, so the list only shrinks.
STALE_README = {
    "worker/spec/models.py": 'README "Problem spec", now docs/spec.md#problem-spec-v1',
}


def without_code_blocks(page: Path) -> str:
    return re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)


def anchors(page: Path) -> set[str]:
    """The anchors of ``page``'s headings, as GitHub derives them (a repeated one with
    ``-1``, ``-2``, ... appended)."""
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#+\s+(.*)$", without_code_blocks(page), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        seen[slug] = seen.get(slug, -1) + 1
        if seen[slug]:
            seen[f"{slug}-{seen[slug]}"] = 0
    return set(seen)


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def docstrings(path: Path) -> list[str]:
    """The module's, its classes' and its functions' docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [tree, *(node for node in ast.walk(tree) if isinstance(
        node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef))]
    return [text for node in nodes if (text := ast.get_docstring(node))]


def member(owner: object, name: str) -> object | None:
    """``owner.name``, or a marker for a field it declares without a class value (a
    dataclass field, a NamedTuple field), else None."""
    found = getattr(owner, name, None)
    if found is None and name in getattr(owner, "__annotations__", {}):
        return name
    return found


def resolve(target: str, module: str) -> bool:
    """Whether ``target`` (``a.b.C``, ``~a.b.C.meth``, ``.sibling``, a name of ``module``)
    names a module or an attribute reachable from one."""
    target = re.sub(r"\s+", "", target).removeprefix("~").removesuffix("()")
    if "<" in target:   # "title <target>"
        target = target.split("<", 1)[1].rstrip(">")
    if target.startswith("."):
        package = module if (ROOT / Path(*module.split("."))).is_dir() \
            else module.rpartition(".")[0]
        target = f"{package}{target}" if target.count(".") == 1 else \
            importlib.util.resolve_name(target, package)
    parts = target.split(".")
    namespace = importlib.import_module(module)
    classes = [value for value in vars(namespace).values() if isinstance(value, type)]
    for start in (namespace, builtins, *classes):   # a bare name may be a class member
        found = start
        for part in parts:
            found = member(found, part)
            if found is None:
                break
        else:
            return True
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            found = member(found, part)
            if found is None:
                return False
        return True
    return False


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docstring_references_resolve(path: Path):
    module = module_name(path)
    broken = [f"{role}:`{target}`" for text in docstrings(path)
              for role, target in ROLE.findall(text) if not resolve(target, module)]
    assert not broken, f"{module}: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_name_existing_files(page: Path):
    broken = []
    for target in LINK.findall(without_code_blocks(page)):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = page.parent / file if file else page
        if not linked.exists() or (anchor and linked.suffix == ".md"
                                   and anchor not in anchors(linked)):
            broken.append(target)
    assert not broken, f"{page.name}: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_named_test_files_exist(page: Path):
    missing = [name for name in TEST_FILE.findall(without_code_blocks(page))
               if not (ROOT / name).exists()]
    assert not missing, f"{page.name}: {missing}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_pointers_to_the_docs_resolve(path: Path):
    text = path.read_text(encoding="utf-8")
    broken = [match.group(0) for match in DOCS_POINTER.finditer(text)
              if not (ROOT / "docs" / match.group(1)).exists()
              or (match.group(2) and match.group(2) not in anchors(ROOT / "docs" / match.group(1)))]
    assert not broken, f"{path.relative_to(ROOT)}: {broken}"
    readme = anchors(ROOT / "README.md")
    stale = [section for section in map(" ".join, map(str.split, README_SECTION.findall(text)))
             if re.sub(r"[^\w\- ]", "", section.lower()).replace(" ", "-") not in readme]
    name = str(path.relative_to(ROOT))
    if name in STALE_README:
        assert stale, f"{name} no longer cites a moved README section: drop it from STALE_README"
    else:
        assert not stale, f"{name}: README sections it cites are gone (now in docs/): {stale}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_lighttouch_is_installed_from_the_repository_with_extras_it_defines(page: Path):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    installs = INSTALLED.findall(page.read_text(encoding="utf-8"))
    assert [what for what, _ in installs if what == "lighttouch"] == [], \
        f"{page.name}: no package index has lighttouch; install it from a clone or its wheel"
    extras = {extra for _, named in installs for extra in named.split(",")}
    assert extras <= set(project["optional-dependencies"]), page.name
