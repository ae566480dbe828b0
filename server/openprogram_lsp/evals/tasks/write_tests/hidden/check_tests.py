"""The tests must pass on leap.py and fail on each wrong version of it (mutants)."""

import pathlib
import shutil
import subprocess
import sys
import tempfile

MUTANTS = {
    "no century rule": "return year % 4 == 0",
    "no 400-year rule": "return year % 4 == 0 and year % 100 != 0",
    "no 4-year rule": "return year % 100 != 0 or year % 400 == 0",
}


def run(where):
    return subprocess.run([sys.executable, "-m", "unittest", "-q", "tests_leap"], cwd=where,
                          capture_output=True, text=True)


if not pathlib.Path("tests_leap.py").is_file():
    sys.exit("tests_leap.py is missing")
first = run(".")
if first.returncode != 0 or "Ran 0 tests" in first.stderr:
    sys.exit(f"the tests do not pass on leap.py:\n{first.stderr[-1500:]}")
original = pathlib.Path("leap.py").read_text()
body = "    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)"
for name, mutant in MUTANTS.items():
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy("tests_leap.py", tmp)
        pathlib.Path(tmp, "leap.py").write_text(original.replace(body, "    " + mutant))
        if run(tmp).returncode == 0:
            sys.exit(f"the tests pass on a wrong leap.py ({name})")
print("tests ok")
