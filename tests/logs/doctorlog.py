"""What 'gpuscope doctor --log FILE --json' says about a log: shared by the
corpus scorer (tests/cli/log-corpus.sh) and the cases runner
(tests/cli/log-cases.sh)."""
import json
import subprocess


def judge(binary, path):
    """([(id, severity)] of the log.* findings, problem or None)."""
    try:
        p = subprocess.run([binary, "doctor", "--log", path, "--json"], capture_output=True,
                           timeout=30)
    except subprocess.TimeoutExpired:
        return [], "timed out"
    if p.returncode not in (0, 1, 2):
        return [], "exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace").strip()[:200])
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        return [], "not JSON: %s" % e
    return [(f.get("id", ""), f.get("severity", "")) for f in doc.get("findings", [])
            if str(f.get("id", "")).startswith("log.")], None
