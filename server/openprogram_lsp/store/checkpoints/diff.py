"""A checkpoint's changes against its parent: unified diff plus each file's before and after."""

from __future__ import annotations

from typing import cast

from openprogram_lsp.store.checkpoints.hunks import zero_context_hunks
from openprogram_lsp.store.checkpoints.meta import STATUS
from openprogram_lsp.store.checkpoints.objects import commit_tree, diff_trees, read_blobs
from openprogram_lsp.store.checkpoints.results import Change, CheckpointDiff, FileDiff
from openprogram_lsp.store.checkpoints.shadow import ShadowRepo

# Text bodies past these limits are left out (``truncated: true``) to keep responses small.
MAX_TEXT_BYTES = 512 * 1024
MAX_TEXT_FILES = 300


def is_binary(data: bytes) -> bool:
    """Git's rule: a NUL byte in the first 8000 bytes; also anything that is not UTF-8."""
    if b"\0" in data[:8000]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def checkpoint_diff(repo: ShadowRepo, checkpoint_id: str, commit: str, parent: str | None,
                    path: str | None) -> CheckpointDiff:
    """A checkpoint's changes against ``parent``; a root checkpoint has none."""
    if parent is None:
        return CheckpointDiff(checkpoint_id=checkpoint_id, diff="", files=[])
    changes = diff_trees(repo, commit_tree(repo, parent), commit_tree(repo, commit),
                         wanted=(path,) if path else None)
    entries = [(c.status, c.path, c.old_sha, c.new_sha) for c in changes]
    args = ["diff-tree", "-p", "-r", "--no-renames", "--no-color", "--no-ext-diff",
            "--no-textconv", "--full-index", parent, commit]
    if path:
        args += ["--", path]
    diff = repo.git(args).decode("utf-8", "replace")
    zero = "0" * 40
    wanted = [sha for _, _, a, b in entries[:MAX_TEXT_FILES] for sha in (a, b) if sha != zero]
    blobs = read_blobs(repo, wanted)
    files: list[FileDiff] = []
    hunked: list[tuple[FileDiff, str, str]] = []
    for n, (status, file_path, old, new) in enumerate(entries):
        item = FileDiff(path=file_path, status=cast(Change, STATUS.get(status, "modified")))
        files.append(item)
        if n >= MAX_TEXT_FILES:
            item.truncated = True
            continue
        texts: dict[str, str] = {}
        for key, sha in (("before", old), ("after", new)):
            if sha == zero:
                continue
            data = blobs[sha]
            if is_binary(data):
                item.binary = True
            elif len(data) > MAX_TEXT_BYTES:
                item.truncated = True
            else:
                texts[key] = data.decode("utf-8")
        if item.binary:
            continue
        item.before, item.after = texts.get("before"), texts.get("after")
        if not item.truncated:
            hunked.append((item, old, new))
    if hunked:
        found = zero_context_hunks(repo.git(
            ["diff-tree", "-p", "-U0", "--inter-hunk-context=0", "--text", "-r", "--no-renames",
             "--no-color", "--no-ext-diff", "--no-textconv", "--full-index", parent, commit,
             "--", *(item.path for item, _, _ in hunked)]))
        for item, old, new in hunked:
            item.hunks = found.get((old, new), [])
    return CheckpointDiff(checkpoint_id=checkpoint_id, diff=diff, files=files)
