import asyncio

from actors.clock import FakeClock
from actors.room_data import WATCHER
from gateway.seats import REPORT_BURST, REPORT_RATE, LocalSeats, PresenceReports


def test_a_seat_leaves_this_process_with_its_last_socket():
    seats = LocalSeats()
    seats.enter("ROOMAA", 3)
    seats.enter("ROOMAA", 3)  # a second tab
    seats.enter("ROOMBB", 3)
    assert seats.room_count == 2 and sorted(seats.held()) == [("ROOMAA", 3), ("ROOMBB", 3)]
    seats.leave("ROOMAA", 3)
    assert seats.count("ROOMAA", 3) == 1
    seats.leave("ROOMAA", 3)
    assert seats.room_count == 1 and seats.held() == [("ROOMBB", 3)]


class Room:
    """What the room was told, in order: (seat, value)."""

    def __init__(self) -> None:
        self.reports: list[tuple[int, int]] = []
        self._arrived = asyncio.Condition()

    async def report(self, room: str, seat: int, value: int) -> None:
        async with self._arrived:
            self.reports.append((seat, value))
            self._arrived.notify_all()

    async def until(self, predicate) -> None:
        async with self._arrived:
            await asyncio.wait_for(self._arrived.wait_for(lambda: predicate(self.reports)), 5)


def reporting() -> tuple[LocalSeats, PresenceReports, Room, FakeClock]:
    seats, room, clock = LocalSeats(), Room(), FakeClock()
    return seats, PresenceReports(seats, room.report, clock), room, clock


async def let_run() -> None:
    await asyncio.sleep(0)  # one turn of the loop: a reporter takes the change it was told of


def come(seats, reports, seat=1) -> None:
    seats.enter("ROOMAA", seat)
    reports.changed("ROOMAA", seat)


def go(seats, reports, seat=1) -> None:
    seats.leave("ROOMAA", seat)
    reports.changed("ROOMAA", seat)


async def test_a_phone_that_reconnects_is_reported_at_once():
    seats, reports, room, _ = reporting()
    come(seats, reports)
    await room.until(lambda r: r == [(1, 1)])
    go(seats, reports)  # its network dropped
    await room.until(lambda r: r == [(1, 1), (1, 0)])
    come(seats, reports)
    await room.until(lambda r: r == [(1, 1), (1, 0), (1, 1)])
    come(seats, reports)  # a second tab: the seat was connected already
    await let_run()
    assert room.reports == [(1, 1), (1, 0), (1, 1)]


async def test_a_seat_flapping_in_a_loop_costs_its_room_a_bounded_number_of_reports():
    seats, reports, room, clock = reporting()
    cycles, step_ms = 200, 50  # 200 reconnects in 10 s: 400 changes
    for _ in range(cycles):
        come(seats, reports)
        await let_run()
        go(seats, reports)
        await let_run()
        clock.advance(step_ms)
    elapsed = cycles * step_ms / 1000
    assert len(room.reports) <= REPORT_BURST + elapsed * REPORT_RATE
    # The state at the end (gone) is what the room hears last, once the next token comes.
    clock.advance(int(1000 / REPORT_RATE))
    await room.until(lambda r: r[-1] == (1, 0))
    told = len(room.reports)
    clock.advance(60_000)
    await let_run()
    assert len(room.reports) == told  # nothing more to tell
    # Quiet for a while, the seat has its whole burst again: an honest reconnect is immediate.
    for i in range(REPORT_BURST):
        (come if i % 2 == 0 else go)(seats, reports)
        await room.until(lambda r, n=told + i + 1: len(r) == n)


async def test_spectators_are_reported_as_a_count_and_other_seats_are_not_held_back():
    seats, reports, room, _ = reporting()
    for _ in range(10):  # ten spectators arrive at once: one report of their count
        come(seats, reports, WATCHER)
    await room.until(lambda r: r == [(WATCHER, 10)])
    for _ in range(3 * REPORT_BURST):  # one seat spends its tokens...
        come(seats, reports, 2)
        await let_run()
        go(seats, reports, 2)
        await let_run()
    come(seats, reports, 3)  # ...the others still have theirs
    await room.until(lambda r: r[-1] == (3, 1))
