"""A Stop hook that reads the transcript (written for these tests), as hookify-style "tests
required" rules do: if the session edited a .py file and no Bash call ran pytest, it asks the
model to go on. It also copies the transcript beside itself for the test to inspect."""
import json
import os
import shutil
import sys

data = json.load(sys.stdin)
path = data["transcript_path"]
shutil.copy(path, os.environ["TRANSCRIPT_COPY"])
edited = tested = False
with open(path) as fh:
    for line in fh:
        entry = json.loads(line)
        message = entry.get("message") or {}
        content = message.get("content")
        if entry.get("type") != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if block.get("type") != "tool_use":
                continue
            if block["name"] in ("Edit", "Write") and block["input"]["file_path"].endswith(".py"):
                edited = True
            if block["name"] == "Bash" and "pytest" in block["input"]["command"]:
                tested = True
if edited and not tested and not data.get("stop_hook_active"):
    print(json.dumps({"decision": "block", "reason": "Run the tests (pytest) before stopping."}))
