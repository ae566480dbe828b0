import sys
import tomllib

with open("config/app.toml", "rb") as fh:
    cfg = tomllib.load(fh)
expected = {
    "server": {"host": "127.0.0.1", "port": 8080, "max_connections": 50, "timeout_seconds": 30},
    "logging": {"level": "info", "debug": False},
    "features": {"beta": ["search", "export"]},
}
if cfg != expected:
    sys.exit(f"config/app.toml is {cfg!r}, expected {expected!r}")
print("config ok")
