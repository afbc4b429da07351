"""The soak's reading of the server's work: CPU and Redis calls per answered command from two
readings, and the gateway counters it reads, on a real gateway."""
from __future__ import annotations

import pytest

from devstack.stack import connect, create_room
from loadtest.measure import Reading, gateway_sums
from loadtest.soak import COUNTED, per_command


def reading(at: float, cpu: dict, commands: float, frames: float, redis_calls: int = 0) -> dict:
    """`cpu`: pid -> (component, seconds), as a Meter reads it per component."""
    by_component: dict = {}
    for pid, (component, seconds) in cpu.items():
        by_component.setdefault(component, {})[pid] = seconds
    return {"reading": Reading(at, by_component, redis_calls, 0, 0), "commands": commands,
            "frames": frames}


def test_cpu_per_command_counts_the_processes_that_lived_through_the_window():
    first = reading(0.0, {1: ("gateway", 10.0), 2: ("ray-hosts", 5.0), 3: ("redis", 1.0),
                          4: ("ray-hosts", 7.0)}, commands=1_000, frames=10_000, redis_calls=50_000)
    # pid 4 died in the window, pid 5 started in it: neither is counted
    last = reading(100.0, {1: ("gateway", 12.0), 2: ("ray-hosts", 6.0), 3: ("redis", 1.5),
                           5: ("ray-hosts", 3.0)}, commands=3_000, frames=50_000,
                   redis_calls=74_000)
    cost = per_command(first, last)
    assert cost["gateway_us"] == 1_000 and cost["ray-hosts_us"] == 500 and cost["redis_us"] == 250
    assert cost["ray-system_us"] == 0 and cost["server_us"] == 1_750
    assert (cost["commands_per_s"], cost["frames_per_command"], cost["cores"]) == (20.0, 20.0, 0.04)
    assert cost["redis_calls_per_command"] == 12.0


def test_no_command_in_the_window_gives_no_figure():
    first = reading(0.0, {1: ("gateway", 1.0)}, commands=5, frames=5)
    cost = per_command(first, reading(10.0, {1: ("gateway", 2.0)}, commands=5, frames=5))
    assert cost["server_us"] is None and cost["frames_per_command"] is None
    assert cost["redis_calls_per_command"] is None


@pytest.mark.e2e
async def test_the_gateway_counters_count_a_command_and_its_frames(stack):
    gateway = stack.start_gateway()
    before = gateway_sums([gateway.url], *COUNTED)
    created = await create_room(gateway.url, "Layla")
    client = await connect(gateway.ws_url, created["room"], created["token"])
    # answered by the room, refused there (the lobby has no chat): a command all the same
    reply = await client.request({"type": "chat", "channel": "day", "text": "hello"})
    assert reply["code"] == "not_your_turn", reply
    await client.close()
    after = gateway_sums([gateway.url], *COUNTED)
    assert after[0] - before[0] == 1 and after[1] - before[1] >= 2  # the welcome and the answer

