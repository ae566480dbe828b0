import subprocess
import sys

out = subprocess.run([sys.executable, "-m", "app.main", "data.csv"], capture_output=True,
                     text=True)
if out.returncode != 0 or out.stdout.strip() != "2 rows, total 3.75":
    sys.exit(f"exit {out.returncode}: {out.stdout!r} {out.stderr[-500:]!r}")
print("main ok")
