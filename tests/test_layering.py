"""The layers, one direction, checked on the source:

    parsers <- kvtui.core <- kvtui.engines <- kvtui.sources <- kvtui.ui / kvtui.commands

(kvtui.ui and kvtui.commands use an engine only through the seam, never by importing it.)

The core loads engines by name (kvtui.core.engine.ENGINE_MODULES), never by a static import, and
one engine's grammar never imports another's. What is one engine's (its grammar, release dating,
sizing rules and the calculator that applies them) lives under kvtui/engines/<name>/: the core
holds no module or package named after an engine, imports no engine's grammar, names no engine
module to load but in ENGINE_MODULES, and nothing points at the core homes SGLang's sizing and
dating left (kvtui/core/capacity/sglang/, kvtui/core/version.py).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UI_AND_IO = {"textual", "rich", "paramiko", "watchfiles"}
FORBIDDEN = {
    "parsers": UI_AND_IO | {"kvtui"},
    "kvtui/core": UI_AND_IO | {"kvtui.ui", "kvtui.sources", "kvtui.engines", "kvtui.commands"},
    "kvtui/engines": UI_AND_IO | {"kvtui.ui", "kvtui.sources", "kvtui.commands"},
    "kvtui/sources": {"textual", "rich", "kvtui.ui", "kvtui.commands", "kvtui.engines"},
    # the commands and the TUI reach an engine through the seam (`kvtui.core.engine.load`):
    # `kvtui whatif` without a log asks `Engine.plan`, a pinned release `Engine.check_release`
    "kvtui/commands": {"kvtui.engines"},
    "kvtui/ui": {"kvtui.engines"},
}
ENGINE_GRAMMARS = sorted(p.name for p in (ROOT / "parsers").iterdir()
                         if p.is_dir() and (p / "__init__.py").exists())
# Where SGLang's sizing rules and release dating lived before they moved behind the engine seam
# (kvtui/engines/sglang/sizing/, kvtui/engines/sglang/version.py): no text may point there again.
OLD_CORE_HOMES = re.compile(r"kvtui[./]core[./]capacity[./]sglang\b|kvtui[./]core[./]version\b")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    mods: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            mods.add(node.module)
    return mods


def test_pure_layers_do_not_import_ui_or_ssh():
    problems = []
    for folder, banned in FORBIDDEN.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            for mod in imported_modules(path):
                if any(mod == b or mod.startswith(b + ".") for b in banned):
                    problems.append(f"{path.relative_to(ROOT)} imports {mod}")
    assert not problems, "\n".join(problems)


def test_textual_only_in_ui():
    problems = []
    for path in sorted((ROOT / "kvtui").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("kvtui/ui/"):
            continue
        for mod in imported_modules(path):
            if mod == "textual" or mod.startswith("textual."):
                # commands may import the UI lazily inside run(), never at module level
                problems.append(f"{rel} imports {mod}")
    assert not problems, "\n".join(problems)


def test_engine_grammars_stay_apart():
    assert "sglang" in ENGINE_GRAMMARS
    problems = []
    for name in ENGINE_GRAMMARS:
        others = {f"parsers.{o}" for o in ENGINE_GRAMMARS if o != name}
        for path in sorted((ROOT / "parsers" / name).rglob("*.py")):
            for mod in imported_modules(path):
                if any(mod == o or mod.startswith(o + ".") for o in others):
                    problems.append(f"{path.relative_to(ROOT)} imports {mod}")
    assert not problems, "\n".join(problems)


def test_every_engine_module_is_a_package_with_an_engine():
    from kvtui.core.engine import ENGINE_MODULES, load

    for name, module in ENGINE_MODULES.items():
        assert module == f"kvtui.engines.{name}"
        assert load(name).name == name


def test_engine_knowledge_stays_out_of_the_core():
    from kvtui.core.engine import ENGINE_MODULES

    names = set(ENGINE_MODULES) | set(ENGINE_GRAMMARS)
    grammars = {f"parsers.{g}" for g in ENGINE_GRAMMARS}
    problems = []
    for path in sorted((ROOT / "kvtui" / "core").rglob("*")):
        rel = path.relative_to(ROOT)
        if path.is_dir() or "__pycache__" in rel.parts:
            continue  # a folder counts by the files in it; bytecode can outlive its source
        if any(name in part.lower() for name in names for part in rel.parts[2:]):
            problems.append(f"{rel} is named after an engine: it belongs in kvtui/engines/")
        if path.suffix != ".py":
            continue
        for mod in imported_modules(path):
            if any(mod == g or mod.startswith(g + ".") for g in grammars):
                problems.append(f"{rel} imports an engine's grammar ({mod})")
        if rel.as_posix() == "kvtui/core/engine_names.py":
            continue  # ENGINE_MODULES: the one place the core names an engine package
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(
                    r"kvtui\.engines(\.\w+)*", node.value):
                problems.append(f"{rel} names the engine module {node.value!r} (a dynamic import "
                                "behind the seam's back)")
    assert not problems, "\n".join(problems)


def test_nothing_points_at_the_old_core_homes_of_sglang_sizing():
    assert not (ROOT / "kvtui" / "core" / "capacity" / "sglang").exists()
    assert not (ROOT / "kvtui" / "core" / "version.py").exists()
    texts = [ROOT / "README.md"] + [
        path for folder in ("kvtui", "parsers", "tests", "bench", "docs")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in (".py", ".md") and path.resolve() != Path(__file__).resolve()]
    problems = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in texts
                for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if OLD_CORE_HOMES.search(line)]
    assert not problems, "\n".join(problems)
