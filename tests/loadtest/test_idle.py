"""The idle command's CPU arithmetic: cores between two readings, less the empty stack's, per
socket-second (a run of the whole command seats tables for minutes: a benchmark, not a test)."""
from __future__ import annotations

import pytest

from loadtest.idle import SERVER, idle_cpu_row
from loadtest.measure import cores_between


def test_cores_count_each_process_from_where_it_stood_and_a_new_one_whole():
    before = {"gateway": {1: 10.0, 2: 5.0}, "ray-hosts": {3: 1.0}}
    after = {"gateway": {1: 12.0, 2: 5.5}, "ray-hosts": {3: 1.5, 4: 0.5}}  # 4 started meanwhile
    assert cores_between(before, after, 10.0) == pytest.approx({"gateway": 0.25, "ray-hosts": 0.1})


def test_the_idle_row_takes_the_empty_stack_off_and_leaves_the_load_clients_out_of_the_server():
    empty = {"gateway": 0.02, "ray-hosts": 0.01, "ray-system": 0.03, "redis": 0.005}
    now = {**{c: v + 0.009 for c, v in empty.items()}, "load clients": 0.5}
    row = idle_cpu_row(empty, now, sockets=18_000, server=SERVER)
    assert row["cores_added"]["gateway"] == pytest.approx(0.009)
    # no empty reading: counted whole
    assert row["cores_added"]["load clients"] == pytest.approx(0.5)
    assert row["server_us_per_socket_second"] == pytest.approx(4 * 0.009 * 1e6 / 18_000, abs=1e-3)
    assert row["server_cores_at_36000_sockets"] == pytest.approx(4 * 0.009 * 2, abs=1e-4)
