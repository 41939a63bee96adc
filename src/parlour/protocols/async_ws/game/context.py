"""What every game of the service shares (GameContext): the host it tells (host.py), the limits,
the seed source, the ledger of an input's records, the roster of live games, and the robots'
settings and their decisions on their way. The registry (game_registry.Games) makes it once."""

from __future__ import annotations

from collections.abc import Callable

from parlour.core.effects import Think
from parlour.core.ids import IdSource
from parlour.protocols.async_ws.game.host import GameHost
from parlour.protocols.async_ws.game.roster import Roster
from parlour.protocols.async_ws.game.store_ledger import Ledger
from parlour.protocols.async_ws.wire.limits import AsyncLimits

__all__ = ["GameContext", "RobotTimer"]

#: Times a robot's decision (rules name, the decision): given by the composition root
#: (parlour.metrics); no clock is read in here.
RobotTimer = Callable[[str, Callable[[], str]], str]


class GameContext:
    """What every game of the service shares: the host, the limits, the seed source (secrets:
    a seed foretells every deal, parlour.core.ids), the ledger, the roster of live games and the
    robot timer."""

    __slots__ = ("host", "ids", "ledger", "limits", "offload", "robot_timer", "roster", "thinking", "thinks")

    def __init__(self, host: GameHost, limits: AsyncLimits, ids: IdSource) -> None:
        self.host = host
        self.limits = limits
        self.ids = ids
        self.ledger = Ledger()
        self.roster = Roster()
        self.robot_timer: RobotTimer | None = None
        #: Whether slow robots (the hard levels, searches) decide away from the event loop:
        #: Think effects, answered through Games.thought. Set by the composition root, whose
        #: runtime runs them; otherwise (tests driving the service) every robot moves at once.
        self.offload = False
        #: This input's Think effects, and each game's position (actions so far) whose robot
        #: decision is on its way: one at a time per game.
        self.thinks: list[Think] = []
        self.thinking: dict[int, int] = {}
