"""A PostToolUse formatter in the shape of Claude Code's examples (written for these tests):
after Edit/Write of a .py file, it strips trailing whitespace in place and says so."""
import json
import sys

data = json.load(sys.stdin)
path = data.get("tool_input", {}).get("file_path", "")
if not path.endswith(".py") or not data.get("tool_response", {}).get("success"):
    sys.exit(0)
with open(path) as fh:
    lines = fh.read().splitlines()
fixed = "\n".join(line.rstrip() for line in lines) + "\n"
with open(path, "w") as fh:
    fh.write(fixed)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                         "additionalContext": f"formatted {path}"}}))
