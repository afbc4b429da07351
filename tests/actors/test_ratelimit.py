from actors.ratelimit import TokenBucket


def test_burst_then_refill_at_rate():
    bucket = TokenBucket(rate=1.0, burst=5)
    now = bucket._at
    assert [bucket.take(now) for _ in range(6)] == [True] * 5 + [False]
    assert bucket.take(now + 0.5) is False
    assert bucket.wait(now + 0.5) == 0.5
    assert bucket.take(now + 1.0) is True and bucket.wait(now + 1.0) == 1.0
    assert [bucket.take(now + 100) for _ in range(6)] == [True] * 5 + [False]
    assert bucket.wait(now + 200) == 0


def test_a_time_before_the_last_refills_nothing():
    bucket = TokenBucket(rate=1.0, burst=2, now=100.0)
    assert [bucket.take(100.0), bucket.take(100.0)] == [True, True]
    assert bucket.take(99.0) is False  # stamped earlier by another gateway: no tokens from it
    assert bucket.take(101.0) is True
