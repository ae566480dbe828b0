import json
import sys

text = open("package.json").read()
data = json.loads(text)
expected = {
    "name": "widget-kit", "version": "1.3.0", "private": True,
    "scripts": {"build": "tsc -p .", "test": "node --test", "lint": "eslint src"},
    "dependencies": {"lodash": "^4.17.21"},
    "devDependencies": {"typescript": "^5.4.0", "left-pad": "^1.3.0"},
}
if data != expected:
    sys.exit(f"package.json is {data!r}")
indents = {len(x) - len(x.lstrip(" ")) for x in text.splitlines() if x.startswith(" ")}
if not indents or min(indents) != 2 or any(n % 2 for n in indents):
    sys.exit(f"package.json is not indented with 2 spaces (indents {sorted(indents)})")
print("package.json ok")
