from gateway.seats import LocalSeats


def test_a_seat_leaves_this_process_with_its_last_socket():
    seats = LocalSeats()
    seats.enter("ROOMAA", 3)
    seats.enter("ROOMAA", 3)  # a second tab
    seats.enter("ROOMBB", 3)
    assert seats.room_count == 2 and sorted(seats.held()) == [("ROOMAA", 3), ("ROOMBB", 3)]
    assert seats.leave("ROOMAA", 3) is False
    assert seats.leave("ROOMAA", 3) is True
    assert seats.room_count == 1 and seats.held() == [("ROOMBB", 3)]
