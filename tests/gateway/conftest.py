from tests.stack import ray_address, redis_url, stack, ww_prefix  # noqa: F401  (fixtures)
