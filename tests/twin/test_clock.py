import time

import pytest

from pytest_itbench.twin.clock import SimClock, format_time, parse_time


def test_warp_runs_fixed_ticks_and_handlers_in_order():
    clock = SimClock(start=1_000, tick=1.0)
    seen = []
    clock.on_tick(lambda t: seen.append(("a", t)))
    clock.on_tick(lambda t: seen.append(("b", t)), every=2.0)
    clock.warp(3)
    assert clock.now() == 1_003
    assert seen == [("a", 1001), ("b", 1001), ("a", 1002), ("a", 1003), ("b", 1003)]


def test_warp_rounds_up_to_whole_ticks_and_refuses_negative():
    clock = SimClock(start=0, tick=5.0)
    clock.warp(7)
    assert clock.now() == 10
    with pytest.raises(ValueError, match="backwards"):
        clock.warp(-1)


def test_a_failing_handler_does_not_stop_the_others():
    clock = SimClock(start=0)
    calls = []

    def broken(t):
        raise RuntimeError("boom")

    clock.on_tick(broken)
    clock.on_tick(calls.append)
    clock.warp(2)
    assert calls == [1, 2]


def test_real_time_mode_follows_wall_time():
    clock = SimClock(start=0, tick=0.05)
    ticks = []
    clock.on_tick(ticks.append)
    clock.follow_wall_time()
    try:
        time.sleep(0.3)
    finally:
        clock.stop_following()
    assert 0.2 <= clock.now() <= 0.5
    assert len(ticks) >= 3
    frozen = clock.now()
    time.sleep(0.1)
    assert clock.now() == frozen  # back in warped mode: time stands still


def test_timestamps_are_rfc3339_and_round_trip():
    assert format_time(0) == "1970-01-01T00:00:00Z"
    assert parse_time("2024-05-06T07:08:09Z") == parse_time(format_time(parse_time("2024-05-06T07:08:09Z")))
    assert SimClock(start=1.7, tick=1).now() == 1.0
