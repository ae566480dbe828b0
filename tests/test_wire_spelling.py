"""Only lsp/ and acp/ spell the wire's camelCase: no other module builds a camelCase dict key.

An AST scan of every module outside ``lsp/`` and ``acp/``: string keys of dict literals, of
subscript assignments and of ``dict(...)``/``.update(...)`` keywords. The domain hands typed,
snake_case values to the edges; the keys allowed below are data, not wire: the spelling of
files already on disk (node metadata, session meta, lock and trust files, context commits),
of formats we read (Claude Code agent files, MCP content) and of JSON Schema.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "server" / "openprogram_lsp"
EDGES = ("lsp/", "acp/")
FIXTURES = ("evals/tasks/",)  # the evaluation tasks' repositories: data, not our modules
CAMEL = re.compile(r"^[a-z]+[A-Z][A-Za-z0-9]*$")

NODE_METADATA = "node metadata, stored in every session's node files (and shown as they are)"
ALLOWED: dict[str, tuple[frozenset[str], str]] = {
    "agent/loop.py": (frozenset({"beforeStep"}), "steering interjections, stored on the node"),
    "agent/tool_exec.py": (frozenset({"acceptedHunks", "decidedAt", "optionId", "originalInput",
                                      "rewrittenBy"}),
                           "a tool call's approval record, stored on the assistant node"),
    "tools/claude_tools.py": (frozenset({"activeForm", "backgroundTaskId", "filePath",
                                         "isImage", "newTodos", "numFiles", "numLines",
                                         "shellId", "startLine"}),
                              "Claude Code's own field names in a hook's tool_input and "
                              "tool_response (its hooks read them as Claude Code spells them)"),
    "hooks/config.py": (frozenset({"pluginRoot", "allowedEnvVars"}),
                        "a hook definition as its trust prompt shows it (its other keys are "
                        "one word; the plugin's folder is Claude Code's CLAUDE_PLUGIN_ROOT, "
                        "an http hook's allowedEnvVars is spelled as in Claude Code's file)"),
    "hooks/transcript.py": (frozenset({"isSidechain", "parentUuid", "sessionId", "userType"}),
                            "Claude Code's transcript format, which hooks read as it spells it"),
    "collab/hub.py": (frozenset({"agentKind", "messageDepth", "parentNodeId",
                                 "parentSessionId"}), NODE_METADATA),
    "collab/jobs.py": (frozenset({"agentType", "deliveryId"}), NODE_METADATA),
    "collab/replies.py": (frozenset({"messageDepth", "sourceId", "sourceKind", "targetNodeId",
                                     "targetSessionId"}), NODE_METADATA),
    "context/commit.py": (frozenset({"contextWindow", "inputTokens", "recommendCompaction",
                                     "summaryNodeId", "usageRatio"}),
                          "the context digest stored in node metadata"),
    "context/compact.py": (frozenset({"userRequests"}), NODE_METADATA + " (summary nodes)"),
    "context/engine.py": (frozenset({"autoCompact", "compactedAt", "summarizerError",
                                     "tokensBefore"}),
                          "summary node metadata and the thresholds of a stored ContextCommit"),
    "core/types.py": (frozenset({"additionalProperties", "anyOf"}), "JSON Schema keywords"),
    "dispatcher/finalize.py": (frozenset({"checkpointId", "createdAt", "finishedAt",
                                          "lastTurnAt"}), NODE_METADATA + " and meta.json"),
    "dispatcher/tool_sources.py": (frozenset({"modelText", "slashCommand"}), NODE_METADATA),
    "dispatcher/tool_records.py": (frozenset({"toolCallId"}), NODE_METADATA),
    "dispatcher/turns.py": (frozenset({"agentId"}), NODE_METADATA),
    "agents/definitions.py": (frozenset({"acceptEdits", "bypassPermissions", "dontAsk",
                                       "disallowedTools", "permissionMode"}),
                            "Claude Code's agent file fields and mode names, as the file "
                            "spells them (shown on the trust card)"),
    "store/context_deltas.py": (frozenset({"listsBase", "listsDepth", "listsDigest",
                                           "listsUnresolved"}),
                                "a stored ContextCommit's delta fields (context-deltas.md)"),
    "store/owner.py": (frozenset({"startTime"}), "the owner record in lock files on disk"),
    "store/reply_calls.py": (frozenset({"blockedReason"}),
                             "a tool node's metadata on disk: why the finished call was blocked"),
    "store/session_store.py": (frozenset({"createdAt", "headId", "updatedAt"}),
                               "a session's meta.json on disk"),
    "tools/mcp/results.py": (frozenset({"mimeType"}), "MCP content's own field, kept on the "
                             "tool call's stored attachments"),
    "tools/mcp/trust.py": (frozenset({"createdAt"}), "the MCP trust file on disk"),
}


def _keys(tree: ast.AST) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            out += [(k.lineno, k.value) for k in node.keys
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            out.append((node.lineno, node.slice.value))
        elif isinstance(node, ast.Call) and (
                (isinstance(node.func, ast.Name) and node.func.id == "dict")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "update")):
            out += [(node.lineno, k.arg) for k in node.keywords if k.arg]
    return out


@functools.cache  # one AST scan of every module (~1.2 s of CPU) for both tests
def _found() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(EDGES + FIXTURES):
            continue
        for line, key in _keys(ast.parse(path.read_text(), str(path))):
            if CAMEL.match(key):
                found.setdefault(rel, set()).add(f"{key} (line {line})")
    return found


def test_no_module_outside_the_edges_builds_a_camel_case_key() -> None:
    stray = {rel: sorted(k for k in keys if k.split(" ")[0] not in ALLOWED.get(
        rel, (frozenset(), ""))[0]) for rel, keys in _found().items()}
    assert {rel: keys for rel, keys in stray.items() if keys} == {}, (
        "camelCase is the wire's spelling: return typed snake_case values and let lsp/ "
        "(lsp/dumps.py) or acp/ spell them; a key that is stored data goes in ALLOWED with why")


def test_the_allow_list_holds_only_keys_still_there() -> None:
    found = {rel: {k.split(" ")[0] for k in keys} for rel, keys in _found().items()}
    stale = {rel: sorted(keys - found.get(rel, set())) for rel, (keys, _why) in ALLOWED.items()}
    assert {rel: keys for rel, keys in stale.items() if keys} == {}


def test_the_scan_sees_each_kind_of_key() -> None:
    tree = ast.parse('a = {"toolCallId": 1}\nb["headId"] = 2\ndict(sessionId=3)\n'
                     'c.update(turnId=4)\nd = {"snake_case": 5}\n')
    assert sorted(k for _, k in _keys(tree) if CAMEL.match(k)) == [
        "headId", "sessionId", "toolCallId", "turnId"]
