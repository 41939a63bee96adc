"""The rating people see: an OpenSkill rating on the familiar Elo scale.

The server rates with OpenSkill's Plackett-Luce model (mu, sigma), whose numbers mean little to
players: a new player is mu 25, sigma 8.33, and the conservative ordinal (mu - 3 sigma) starts at
0 and reads -1.83 after a first lost game. Everything that shows a rating (the leaderboard, the
outcome screen, the lobby's player details, the profile page) shows ``shown_rating`` instead:

    rating = round(1500 + SCALE * (mu - 25))       SCALE = 400 / (ln 10 * beta * sqrt 2)

- **1500 is the start**, as on most Elo sites: a new player (mu 25) reads 1500.
- **400 points mean what they mean in Elo**: 10 to 1 odds. For two settled players (small
  sigma), the model gives the better one odds of exp(delta_mu / c) with c = beta * sqrt 2 (beta =
  25/6, the model's default), while Elo gives 10 ** (delta / 400). Equating the two makes one mu
  worth 400 / (ln 10 * c), about 29.5 rating points.
- **The shown number is the estimate (mu), not the conservative ordinal**, so that an average
  player stays near 1500 however many games they play (the ordinal climbs with every game as
  sigma shrinks, even for a player who never improves). The uncertainty is shown instead as
  **provisional**: until PROVISIONAL_GAMES games are rated at a game type, the rating is marked
  (the browser writes "1520?"), and the leaderboard lists settled players above provisional ones.

Pure: a function of its arguments, shared by every module that shows a rating, so the scale has
one definition.
"""

from __future__ import annotations

import math
from typing import Final, NamedTuple

__all__ = ["BASE", "MU0", "PROVISIONAL_GAMES", "SCALE", "Shown", "shown_change", "shown_rating"]

#: The rating of a new player.
BASE: Final = 1500
#: OpenSkill's default mu and beta (openskill.models.PlackettLuce(): mu 25, sigma 25/3, beta 25/6).
MU0: Final = 25.0
_BETA: Final = MU0 / 6
#: Rating points per unit of mu: 400 points are 10 to 1 odds between settled players (see above).
SCALE: Final = 400 / (math.log(10) * _BETA * math.sqrt(2))
#: A rating is provisional until this many games of its type were rated.
PROVISIONAL_GAMES: Final = 5


class Shown(NamedTuple):
    """A rating as shown: the number, and whether it is still provisional."""

    rating: int
    provisional: bool

    def text(self) -> str:
        """ "1520", or "1520?" while provisional."""
        return f"{self.rating}?" if self.provisional else str(self.rating)


def shown_rating(mu: float, games: int) -> Shown:
    """The rating shown for an OpenSkill ``mu`` after ``games`` rated games of one type."""
    return Shown(round(BASE + SCALE * (mu - MU0)), games < PROVISIONAL_GAMES)


def shown_change(mu_before: float, mu_after: float) -> int:
    """What a game changed of the shown rating: the difference of the two shown numbers (so that
    the change always adds up to what the leaderboard shows)."""
    return shown_rating(mu_after, 0).rating - shown_rating(mu_before, 0).rating
