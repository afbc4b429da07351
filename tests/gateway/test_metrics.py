"""A gateway process's metrics (its own registry, not multiprocess mode here)."""
from gateway.metrics import Metrics


def test_events_counted_off_the_frame_path_reach_their_counter_by_the_exposition():
    metrics = Metrics()
    metrics.events_written += 3
    assert b'ww_ws_messages_out_total{type="event"} 3.0' in metrics.text()
    metrics.out_event.inc()  # the sender's passes count on the counter itself
    metrics.events_written += 1
    metrics.flush()
    assert metrics.events_written == 0
    assert b'ww_ws_messages_out_total{type="event"} 5.0' in metrics.text()
