"""A Bash command validator in the shape of Claude Code's example hook (written for these tests):
it reads tool_input.command and refuses, with exit 2 and a reason on stderr, commands that
should use a better tool."""
import json
import re
import sys

RULES = [(r"\bgrep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep' for speed"),
         (r"\bfind\s+\S+\s+-name\b", "Use 'rg --files -g PATTERN' instead of 'find -name'")]

data = json.load(sys.stdin)
if data.get("tool_name") != "Bash":
    sys.exit(0)
command = data.get("tool_input", {}).get("command", "")
problems = [why for pattern, why in RULES if re.search(pattern, command)]
if problems:
    for why in problems:
        print(f"• {why}", file=sys.stderr)
    sys.exit(2)
