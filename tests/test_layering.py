"""The layers, one direction, checked on the source:

    parsers <- kvtui.core <- kvtui.engines <- kvtui.sources <- kvtui.ui / kvtui.commands

The core loads engines by name (kvtui.core.engine.ENGINE_MODULES), never by a static import, and
one engine's grammar never imports another's.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UI_AND_IO = {"textual", "rich", "paramiko", "watchfiles"}
FORBIDDEN = {
    "parsers": UI_AND_IO | {"kvtui"},
    "kvtui/core": UI_AND_IO | {"kvtui.ui", "kvtui.sources", "kvtui.engines", "kvtui.commands"},
    "kvtui/engines": UI_AND_IO | {"kvtui.ui", "kvtui.sources", "kvtui.commands"},
    "kvtui/sources": {"textual", "rich", "kvtui.ui", "kvtui.commands", "kvtui.engines"},
}
ENGINE_GRAMMARS = sorted(p.name for p in (ROOT / "parsers").iterdir()
                         if p.is_dir() and (p / "__init__.py").exists())


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
