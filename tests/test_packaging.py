"""Every data file the server reads at run time is declared as package data, so a wheel (or
any non-editable install) carries it: the prompts, the model table."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "server" / "openprogram_lsp"


def test_every_data_file_is_package_data() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["openprogram_lsp"]
    data = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*")
                  if p.is_file() and p.suffix not in (".py", ".pyc")
                  and "__pycache__" not in p.parts)
    assert {"prompts/system.md", "prompts/tools.md", "providers/models.toml"} <= set(data)
    missing = [d for d in data if not any(fnmatch.fnmatchcase(d, g) for g in declared)]
    assert missing == [], f"not in [tool.setuptools.package-data]: {missing}"
