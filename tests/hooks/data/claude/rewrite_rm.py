"""A PreToolUse rewriter (written for these tests): `rm` becomes `trash` -- here `mv` into a
bin -- and the call goes on with updatedInput; the decision is given by the first argument."""
import json
import sys

data = json.load(sys.stdin)
command = data["tool_input"]["command"]
if not command.startswith("rm "):
    sys.exit(0)
target = command[3:].strip()
updated = dict(data["tool_input"], command=f"mkdir -p .bin && mv {target} .bin/")
decision = sys.argv[1] if len(sys.argv) > 1 else "allow"
print(json.dumps({"hookSpecificOutput": {
    "hookEventName": "PreToolUse", "permissionDecision": decision,
    "permissionDecisionReason": "rm is rewritten to move into .bin", "updatedInput": updated}}))
