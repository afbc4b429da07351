"""The abuse suite's table: every probe module, in the order they run (`--only` keeps the order).
Adding a probe is adding its module (loadtest/abuse/__init__.py says what it holds) and its line
here."""
from loadtest.abuse import (again, flood, flooders, forbidden, headers, headers500, lobbies, names,
                            oracle, origin, presses, proxy, readers, reports, review)

PROBES = {module.__name__.rsplit(".", 1)[1]: module for module in (
    headers, readers, oracle, origin, forbidden, proxy, lobbies, presses, names, review, reports,
    again, flood, flooders, headers500)}
