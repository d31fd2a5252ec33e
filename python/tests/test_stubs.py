"""The type stubs (weft/*.pyi) describe what the module has: every class, function,
method and attribute they name exists, and every public name has a stub."""

import ast
import sys
from pathlib import Path

import pytest

import weft
import weft.ext
import weft.handlers

STUBS = Path(weft.__file__).parent


def base_names(node):
    """The names of a class's bases (`Base` or `Base[T]`)."""
    names = []
    for base in node.bases:
        if isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.Name):
            names.append(base.id)
    return names


def stub_names(path):
    """{class or function: set of member names} of a stub file; a class has the members
    of the stub's classes it derives from. Private names (`_Handled`, bases shared by the
    stubs only) are left out."""
    tree = ast.parse(path.read_text())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = set()
            for base in base_names(node):
                members |= found.get(base, set())
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
            found[node.name] = members
        elif isinstance(node, ast.FunctionDef):
            found[node.name] = set()
        elif isinstance(node, ast.ImportFrom) and node.module == "handlers":
            found.update({a.asname or a.name: set() for a in node.names})
    return {name: members for name, members in found.items() if not name.startswith("_")}


@pytest.mark.parametrize(
    "module,stub",
    [(weft, "__init__.pyi"), (weft.handlers, "handlers.pyi"), (weft.ext, "ext.pyi")],
)
def test_stubs_match_the_module(module, stub):
    path = STUBS / stub
    assert path.exists(), f"{stub} is installed with the wheel"
    names = stub_names(path)
    for name, members in names.items():
        obj = getattr(module, name)
        for member in members:
            if member == "__buffer__" and sys.version_info < (3, 12):
                # The buffer protocol is there on every version; its method from 3.12.
                continue
            assert hasattr(obj, member), f"{name}.{member} is in the stub, not the module"
    public = set(getattr(module, "__all__", []))
    missing = {n for n in public if n not in names and n not in ("handlers", "ext")}
    assert not missing, f"no stub for {sorted(missing)}"
