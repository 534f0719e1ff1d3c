import threading

import nbval.kernel

import conftest as session  # the repository's root conftest.py, which pytest has imported


def _overlaps(monkeypatch, start) -> bool:
    """Two threads start a (fake) kernel through ``start``; whether one start-up began while the
    other was still inside: the fake start waits for the other thread to arrive (up to 5 s) and
    records whether it did. No clock is compared: under load a start-up may take any time."""
    arrived = threading.Barrier(2)
    met = []

    def fake_start(*args, **kwargs):
        try:
            arrived.wait(timeout=5)
            met.append(True)
        except threading.BrokenBarrierError:
            met.append(False)
        return "manager", "client"

    monkeypatch.setattr(session, "_start_new_kernel", fake_start)
    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return any(met)


def test_the_plugin_replaces_nbvals_kernel_start():
    assert nbval.kernel.start_new_kernel is session.start_new_kernel_in_turn


def test_kernel_start_ups_take_turns(monkeypatch):
    assert not _overlaps(monkeypatch, session.start_new_kernel_in_turn)
    # the same fake start without the lock overlaps: the check above can fail
    assert _overlaps(monkeypatch, lambda: session._start_new_kernel())


def test_the_lock_passes_the_arguments_and_the_result_through(monkeypatch):
    seen = []
    monkeypatch.setattr(session, "_start_new_kernel", lambda *a, **k: seen.append((a, k)) or ("m", "c"))
    assert session.start_new_kernel_in_turn("python", startup_timeout=60) == ("m", "c")
    assert seen == [(("python",), {"startup_timeout": 60})]
