"""Who may read and write the box's files: a store made by hand (umask 022) is the
owner's alone, and under systemd (a sticky, group-writable state folder and a
group-writable runtime folder, the service's umask 0077) the web page's group gets
exactly what it must: the records, the index, names.json and the live feed, never
the journal."""
from __future__ import annotations

import os
import stat
from contextlib import contextmanager

from firmware_py.companion.journal import Journal
from firmware_py.companion.names import save_names
from firmware_py.service.feed import FeedPublisher
from firmware_py.web.feed import FeedSubscriber
from firmware_py.store import History
from test_faults_rig import GOLDEN_RECORDS
from test_feed import _capture, _ui_after


@contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_store_made_by_hand_under_umask_022_is_the_owners_alone(tmp_path):
    state = tmp_path / "state" / "patchwork-companion"
    with umask(0o022):
        History(state).file("g1", GOLDEN_RECORDS[0])
        journal = Journal(tmp_path / "journal-only")
        journal.load()
        journal.append({"kind": "setup", "setup": {}})
        save_names(tmp_path / "names-only" / "names.json", ["Anna"])
    assert mode(state) == 0o700 and mode(state / "records") == 0o700
    assert mode(state / "history.sqlite3") & 0o077 == 0
    assert mode(tmp_path / "journal-only") == 0o700
    assert mode(tmp_path / "names-only") == 0o700


def test_under_systemd_the_group_gets_records_index_names_and_feed_never_the_journal(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    os.chmod(state, 0o1770)                              # StateDirectoryMode=1770
    run = tmp_path / "run"
    run.mkdir()
    os.chmod(run, 0o770)                                 # RuntimeDirectoryMode=0770
    with umask(0o077):                                   # the game service's UMask
        History(state).file("g1", GOLDEN_RECORDS[0])
        journal = Journal(state)
        journal.load()
        journal.append({"kind": "setup", "setup": {}})
        publisher = FeedPublisher(run)
        try:
            with umask(0o007):                           # the web page's UMask
                subscriber = FeedSubscriber(run, "web")
                save_names(state / "names.json", ["Anna"])
            publisher.publish(_capture(_ui_after(GOLDEN_RECORDS[0], 3)))
        finally:
            publisher.close()
    try:
        assert mode(state / "records") == 0o770          # a rename rewrites records
        assert mode(state / "records" / "g1.json") == 0o644
        assert mode(state / "history.sqlite3") == 0o660  # and their index rows
        assert mode(state / "names.json") == 0o640       # the service reads the names
        assert mode(state / "journal.jsonl") & 0o077 == 0            # the journal: never
        assert mode(run / "feed") == 0o770 and mode(subscriber.path) == 0o660
        assert mode(run / "live.json") == 0o640
    finally:
        subscriber.close()
