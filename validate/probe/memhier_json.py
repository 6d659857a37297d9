"""Runs a memhier command for the probe scripts and parses its --json output, or exits naming the command and what
it printed (a missing binary, a failing simulation, output that is not JSON)."""
import json
import subprocess


def run(cmd):
    """The parsed JSON that `cmd` (a memhier command line with --json) prints; SystemExit if it cannot be had."""
    cmd = [str(c) for c in cmd]
    try:
        return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        raise SystemExit(f"{' '.join(cmd)} failed: {getattr(e, 'stderr', None) or e}")
