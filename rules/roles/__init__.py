"""One module per role (and one for the day): each registers its steps, death hooks and view
fields with `rules.table`. Adding a role = adding a module here and importing it below.

Import order is hook order: cupid first, so a lover's grief is resolved before the reactions
(hunter's shot, mayor's succession) of the death that caused it are queued.
"""

from rules.roles import cupid, day, hunter, mayor, seer, werewolf, witch  # noqa: F401
