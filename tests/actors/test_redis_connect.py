"""What `connect` reads from a multi-host URL (a Redis Cluster's, a Sentinel service's); the
clients it makes are what every Redis test runs on (conftest's `any_redis_url`)."""
import pytest

from actors.redis_connect import parse_cluster_url, parse_sentinel_url


def test_a_cluster_url_names_its_nodes_and_password_and_a_sentinel_url_its_service():
    assert parse_cluster_url("redis+cluster://:p%40ss@n1:7000,n2") == (
        [("n1", 7000), ("n2", 6379)], {"password": "p@ss"})
    assert parse_cluster_url("redis+cluster://n1:7000/0") == ([("n1", 7000)], {})
    with pytest.raises(ValueError):  # a cluster has database 0 only
        parse_cluster_url("redis+cluster://n1:7000/3")
    assert parse_sentinel_url("redis+sentinel://:pw@s1:1,s2/svc/2") == (
        [("s1", 1), ("s2", 26379)], "svc", {"db": 2, "password": "pw"})
