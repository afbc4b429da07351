from gateway.seats import LocalSeats


def test_a_seat_leaves_with_its_last_socket_and_keeps_one_chat_limit():
    seats = LocalSeats()
    first = seats.enter("ROOMAA", 3)
    assert seats.enter("ROOMAA", 3) is first  # a second tab shares the rate limit
    seats.enter("ROOMBB", 3)
    assert seats.room_count == 2
    assert seats.leave("ROOMAA", 3) is False
    assert seats.leave("ROOMAA", 3) is True
    assert seats.room_count == 1
    assert seats.enter("ROOMAA", 3) is not first
