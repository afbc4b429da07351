from actors.ratelimit import TokenBucket


def test_burst_then_refill_at_rate():
    bucket = TokenBucket(rate=1.0, burst=5)
    now = bucket._at
    assert [bucket.take(now) for _ in range(6)] == [True] * 5 + [False]
    assert bucket.take(now + 0.5) is False
    assert bucket.take(now + 1.0) is True
    assert [bucket.take(now + 100) for _ in range(6)] == [True] * 5 + [False]
