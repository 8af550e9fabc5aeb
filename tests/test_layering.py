"""The three layers, one direction: parsers <- kvtui.core <- kvtui.ui. Checked on the source."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "parsers": {"textual", "rich", "paramiko", "kvtui", "watchfiles"},
    "kvtui/core": {"textual", "rich", "paramiko", "watchfiles", "kvtui.ui", "kvtui.sources"},
}


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
