"""The list of public tables as the gateway serves it: every kind the filter names, ordered,
paged, and read from the index at most once a second per kind however many pages ask."""
import asyncio

import pytest

from actors.tables import Kind, NoSuchKind
from gateway.tables import PAGE_SIZE, PublicTables


class Index:
    """RoomClient.public_tables over a dict, counting its reads."""

    def __init__(self, entries: dict[tuple[Kind, str], list[dict]]) -> None:
        self.entries = entries
        self.reads = 0

    async def public_tables(self, kind: Kind, state: str) -> list[dict]:
        self.reads += 1
        await asyncio.sleep(0)
        return self.entries.get((kind, state), [])


def table(room: str, seats: int, kind: Kind, started: int = 0) -> dict:
    return {"room": room, "preset": kind.preset, "language": kind.language, "seats": seats,
            "size": 18, "starts_at": None, "started": started}


CLASSIC, WEB = Kind("seed_000", "en"), Kind("seed_004", "en")


async def test_open_tables_come_fullest_first_across_kinds_a_page_at_a_time():
    many = [table(f"A{i:05}", i % 18, CLASSIC) for i in range(30)]
    index = Index({(CLASSIC, "open"): many, (WEB, "open"): [table("WEB000", 17, WEB)]})
    tables = PublicTables(index)
    first = await tables.page("open", None, "en", 1)
    assert (first["total"], first["pages"], len(first["tables"])) == (31, 2, PAGE_SIZE)
    seats = [t["seats"] for t in first["tables"]]
    assert seats == sorted(seats, reverse=True) and first["tables"][0]["seats"] == 17
    last = await tables.page("open", None, "en", 9)  # past the end: the last page
    assert last["page"] == 2 and len(last["tables"]) == 11
    only_web = await tables.page("open", "seed_004", None, 1)
    assert [t["room"] for t in only_web["tables"]] == ["WEB000"]


async def test_running_games_come_newest_first():
    index = Index({(CLASSIC, "running"): [table("OLD000", 18, CLASSIC, started=1),
                                          table("NEW000", 18, CLASSIC, started=9)]})
    page = await PublicTables(index).page("running", "seed_000", "en", 1)
    assert [t["room"] for t in page["tables"]] == ["NEW000", "OLD000"]


async def test_pages_asking_together_cost_one_read_of_each_kind():
    index = Index({})
    tables = PublicTables(index)
    await asyncio.gather(*(tables.page("open", "seed_000", "en", 1) for _ in range(50)))
    await tables.page("open", "seed_000", "en", 1)
    assert index.reads == 1


async def test_an_unknown_preset_or_language_is_refused():
    with pytest.raises(NoSuchKind):
        await PublicTables(Index({})).page("open", "seed_999", None, 1)
