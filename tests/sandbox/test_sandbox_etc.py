"""The /etc snapshot is built once even when threads of one process ask for it at the same time."""

from __future__ import annotations

import threading

from sweworld.sandbox import etc


def test_parallel_first_snapshots_share_one_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path))
    etc._snapshot.cache_clear()
    fingerprint = "test-" + etc._fingerprint()
    barrier, results, errors = threading.Barrier(8), [], []

    def build():
        barrier.wait()
        try:
            results.append(etc._snapshot.__wrapped__(fingerprint))
        except Exception as exc:  # the bug this guards against: FileNotFoundError in a shared staging dir
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(set(results)) == 1
    final = results[0]
    assert final.is_dir() and (final / "passwd").exists()
    assert [p.name for p in final.parent.iterdir()] == [final.name]  # no staging directory left behind
    etc._snapshot.cache_clear()
