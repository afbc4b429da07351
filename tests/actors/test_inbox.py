"""A request and its reply, both ends (actors.inbox): the wire format, the rider, the host's
outbox and the gateway's settling, without Redis."""
import asyncio

import orjson
import pytest

from actors.inbox import (REPLY_OK, REPLY_UNAVAILABLE, RODE, Outbox, Rider, RoomUnavailable,
                          events_and_replies, events_message, read_request, replies_in,
                          riders_item, settle, write_request)

ACK = {"type": "ack", "id": 3}


def test_a_command_from_a_listening_gateway_carries_its_rider_and_no_other_request_does():
    arg = [{"type": "chat"}, 5, "ab", True]  # frame, received, proof, listening
    raw = write_request("gw1", 7, "command", "ABCDEF", 2, arg)
    assert orjson.loads(raw) == ["gw1", 7, "command", "ABCDEF", 2, arg]
    assert read_request(raw).arg == [{"type": "chat"}, 5, "ab", Rider("gw1", 7)]
    deaf = read_request(write_request("gw1", 8, "command", "ABCDEF", 2, [{}, None, None, False]))
    assert deaf.arg[3] is None
    presence = read_request(write_request("gw1", 9, "presence", "ABCDEF", 2, ["gw1", True]))
    assert (presence.kind, presence.seat, presence.arg) == ("presence", 2, ["gw1", True])
    with pytest.raises((TypeError, ValueError)):
        read_request(b'{"not": "a request"}')


def test_replies_ride_the_events_message_last_and_each_gateway_reads_its_own():
    rides = [(Rider("gw1", 7), ACK), (Rider("gw2", 1), None), (Rider("gw1", 8), ACK)]
    message = events_message([b'{"seq":1}', b'{"seq":2}'], riders_item(rides))
    assert orjson.loads(message)[-1] == {"replies": {
        "gw1": [[7, REPLY_OK, ACK], [8, REPLY_OK, ACK]], "gw2": [[1, REPLY_OK, None]]}}
    assert events_and_replies(message, "gw1") == ([{"seq": 1}, {"seq": 2}],
                                                  [[7, REPLY_OK, ACK], [8, REPLY_OK, ACK]])
    assert events_and_replies(message, "gw3")[1] == []
    assert riders_item([]) == b"" and events_message([b'{"seq":1}']) == b'[{"seq":1}]'


async def test_the_outbox_sends_a_turn_s_replies_in_one_message_and_nothing_for_a_rider():
    sent: list[tuple[str, bytes]] = []

    async def send(gateway: str, message: bytes) -> None:
        sent.append((gateway, message))

    tasks: list[asyncio.Task] = []
    outbox = Outbox("h1", send, tasks.append)
    outbox.put("gw1", 1, ACK)
    outbox.put("gw1", 2, RODE)  # it went out with the events
    outbox.put("gw1", 3, RoomUnavailable("retry"))
    await asyncio.sleep(0)  # the turn ends: the flush starts
    await asyncio.gather(*tasks)
    assert [(gateway, orjson.loads(message)) for gateway, message in sent] == [
        ("gw1", {"host": "h1", "replies": [[1, REPLY_OK, ACK], [3, REPLY_UNAVAILABLE, "retry"]]})]
    waiting = {1: asyncio.get_running_loop().create_future(),
               3: asyncio.get_running_loop().create_future()}
    settle(waiting, replies_in(sent[0][1]))
    assert waiting[1].result() == ACK
    with pytest.raises(RoomUnavailable):
        waiting[3].result()
    settle(waiting, [[1, REPLY_OK, "again"], [99, REPLY_OK, None]])  # a resend's, an unknown
    assert waiting[1].result() == ACK
