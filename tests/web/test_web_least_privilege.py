"""The web page's user against the game service's files, with the kernel's own
permission checks: two processes drop to two made-up user ids sharing one group,
as the units run them (the service: its own user, umask 0077; the page: its own
user in the service's group, umask 0007), in a state folder of mode 1770 (the
service unit's StateDirectoryMode). The page renames a game and saves names; it
can neither read, write, rename nor remove the journal. Needs root (to hand out
the user ids); skipped otherwise."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from test_faults_rig import GOLDEN_RECORDS

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch user ids")

GROUP, SERVICE, WEB = 61000, 61001, 61002
ROOT = Path(__file__).resolve().parents[2]


def _directive(unit: str, key: str) -> str:
    """The value of ``key`` in ``systemd/<unit>`` (the units as installed)."""
    for line in (ROOT / "systemd" / unit).read_text().splitlines():
        if line.startswith(key + "="):
            return line.split("=", 1)[1].strip()
    raise AssertionError(f"{unit} has no {key}")

# imports first (the interpreter's own files may be unreadable to the made-up users),
# then the switch to the user
PRELUDE = """
import json, os, sys
from pathlib import Path
from firmware_py.companion.journal import Journal
from firmware_py.companion.names import load_names, save_names
from firmware_py.rules import parse_record
from firmware_py.store import History
from firmware_py.web.library import Library
import importlib.readers, sqlite3, tempfile
from firmware_py.rules import load_spec
from firmware_py.store import summarise
uid, umask, state = int(sys.argv[1]), int(sys.argv[2], 8), Path(sys.argv[3])
warm = parse_record(sys.argv[4])
summarise(warm, "warm", "warm.json", 1, 0.0)
load_spec("patchwork"), load_spec("patchwork-express")
os.setgroups([{group}])
os.setgid({group})
os.setuid(uid)
os.umask(umask)
out = {{}}

def attempt(name, fn):
    try:
        fn()
        out[name] = "done"
    except PermissionError:
        out[name] = "refused"
""".format(group=GROUP)


def _as(uid: int, umask: str, state: Path, code: str) -> dict:
    from firmware_py.rules import dumps_record
    done = subprocess.run([sys.executable, "-c", PRELUDE + code + "\nprint(json.dumps(out))",
                           str(uid), umask, str(state), dumps_record(GOLDEN_RECORDS[0])],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_web_user_renames_games_and_saves_names_but_cannot_touch_the_journal():
    base = Path(tempfile.mkdtemp(prefix="pwc-privilege-", dir="/tmp"))
    try:
        os.chmod(base, 0o711)
        state = base / "state"
        state.mkdir()
        os.chown(state, SERVICE, GROUP)
        os.chmod(state, int(_directive("patchwork-companion.service", "StateDirectoryMode"), 8))
        service_umask = _directive("patchwork-companion.service", "UMask")[-3:]
        web_umask = _directive("patchwork-companion-web.service", "UMask")[-3:]
        service = _as(SERVICE, service_umask, state, """
History(state).file("g1", warm)
journal = Journal(state)
journal.load()
journal.append({"kind": "setup", "setup": {}})
out["journal"] = sorted(p.name for p in state.iterdir())
""")
        assert "journal.jsonl" in service["journal"]
        web = _as(WEB, web_umask, state, """
attempt("rename", lambda: Library(state).rename("g1", ("Anna", "Ben")))
attempt("names", lambda: save_names(state / "names.json", ["Anna", "Ben"]))
journal = state / "journal.jsonl"
attempt("read journal", lambda: journal.read_bytes())
attempt("write journal", lambda: open(journal, "ab").close())
attempt("rename journal", lambda: os.rename(journal, state / "gone"))
attempt("remove journal", lambda: os.unlink(journal))
attempt("replace journal", lambda: os.replace(state / "names.json", journal))
""")
        assert web == {"rename": "done", "names": "done", "read journal": "refused",
                       "write journal": "refused", "rename journal": "refused",
                       "remove journal": "refused", "replace journal": "refused"}
        after = _as(SERVICE, service_umask, state, """
out["names"] = load_names(state / "names.json")
out["players"] = list(parse_record((state / "records" / "g1.json").read_bytes()).players)
with History(state).index() as index:
    out["indexed"] = [tuple(r) for r in index.db.execute("SELECT name FROM players ORDER BY seat")]
journal = Journal(state)
journal.load()
journal.append({"kind": "setup", "setup": {}})
out["journal"] = "written"
""")
        assert after["names"][-2:] == ["Anna", "Ben"]
        assert after["players"] == ["Anna", "Ben"]
        assert after["indexed"] == [["Anna"], ["Ben"]]
        assert after["journal"] == "written"
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)
