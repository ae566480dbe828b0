"""The test plugin's hook: refuses writes to *.gen.* files, naming its plugin root."""
import json
import os
import sys

data = json.load(sys.stdin)
if ".gen." in data["tool_input"]["file_path"]:
    root = os.environ["CLAUDE_PLUGIN_ROOT"]
    print(f"generated file (guard plugin at {root})", file=sys.stderr)
    sys.exit(2)
