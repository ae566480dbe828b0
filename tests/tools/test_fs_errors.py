"""A file system's refusal as one sentence: the call's own path, the reason, never a temp name."""

from __future__ import annotations

import errno

import pytest

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.tools.builtin.files import EditFile, MultiEdit, WriteFile
from openprogram_lsp.tools.fs_errors import describe


def test_the_message_names_the_calls_path_and_the_reason() -> None:
    exc = OSError(errno.EROFS, "Read-only file system", ".a.txt.8c27a05eed40.tmp")
    assert describe("write_file", {"path": "ro/a.txt"}, exc) == \
        "write_file failed: ro/a.txt: the file system is read-only (EROFS)"
    full = describe("write_file", {"path": "x"}, OSError(errno.ENOSPC, "No space left"))
    assert full == "write_file failed: x: no space is left on the device (ENOSPC)"
    long = describe("write_file", {"path": "n" * 300}, OSError(errno.ENAMETOOLONG, "x"))
    assert "(300 chars)" in long and len(long) < 250
    odd = describe("grep", {"pattern": "x"}, OSError(errno.EXDEV, "Invalid cross-device link"))
    assert odd == "grep failed: Invalid cross-device link (EXDEV)"


@pytest.mark.parametrize("name", ["bad\nname.txt", "tab\there", "esc\x1b[31m", "nul\0",
                                  "del\x7f", "c1\x85", "sep\u2028x"])
def test_tools_that_write_refuse_control_characters_in_names(name: str) -> None:
    for tool, arguments in ((WriteFile(), {"content": "x"}),
                            (EditFile(), {"old_text": "a", "new_text": "b"}),
                            (MultiEdit(), {"edits": [{"old_text": "a", "new_text": "b"}]})):
        with pytest.raises(ToolError, match=r"control character .* in the file name"):
            tool.parse({"path": name, **arguments})
    assert WriteFile().parse({"path": "ünïcode name.txt", "content": "x"})
