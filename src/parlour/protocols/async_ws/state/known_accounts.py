"""The /async accounts as the service knows them: names, password hashes and ratings, loaded from
the store at start and kept as accounts are created (docs/async-decisions.md S10, S12).

One ``Accounts`` per service; handlers read it (``hub.accounts.get``, ``in``) and change it only
through ``add``, ``forget``, ``rate`` and ``unrate``.
"""

from __future__ import annotations

from collections.abc import Iterator, ValuesView
from dataclasses import dataclass, field

from parlour.accounts.moderation import Ban
from parlour.storage import AccountRow, AccountSeen, RatingRow

__all__ = ["Account", "Accounts"]


@dataclass(slots=True)
class Account:
    id: int
    name: str
    #: Argon2id hash ("" for accounts of an external OAuth2 provider): checked on sign-in.
    password_hash: str = ""
    #: Ratings by game type: (mu, sigma, games rated).
    ratings: dict[str, tuple[float, float, int]] = field(default_factory=dict)
    created: float = 0.0
    #: As loaded: admin requests read the role from the store (``parlour admin`` changes it there).
    role: str = ""
    #: The revocation counter (AccountRow.revision): tokens of another value are refused.
    revision: int = 0
    #: The ban, if any (it may have ended: ``Ban.active``).
    ban: Ban | None = None
    #: When it last signed in or out (AccountRow.last_seen; Accounts.seen changes it).
    last_seen: float | None = None

    def row(self) -> AccountRow:
        """The account as stored (its role is the store's to keep: tables.ACCOUNTS)."""
        return AccountRow(
            id=self.id,
            name=self.name,
            password_hash=self.password_hash,
            created=self.created,
            role=self.role,
            revision=self.revision,
            ban_reason=self.ban.reason if self.ban is not None else "",
            ban_until=self.ban.until if self.ban is not None else None,
            last_seen=self.last_seen,
        )


class Accounts:
    """Accounts by id and by case-folded name, and the next id to give."""

    __slots__ = ("_by_id", "_by_name", "_seen", "next_id")

    def __init__(self) -> None:
        self._by_id: dict[int, Account] = {}
        self._by_name: dict[str, int] = {}
        self.next_id = 1
        #: Accounts seen since their last_seen was last stored (``seen_rows``).
        self._seen: set[int] = set()

    def __contains__(self, account_id: object) -> bool:
        return account_id in self._by_id

    def __getitem__(self, account_id: int) -> Account:
        return self._by_id[account_id]

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[int]:
        return iter(self._by_id)

    def values(self) -> ValuesView[Account]:
        return self._by_id.values()

    def get(self, account_id: int | None) -> Account | None:
        return self._by_id.get(account_id) if account_id is not None else None

    def named(self, name: str) -> Account | None:
        """The account of this name, whatever its case."""
        account_id = self._by_name.get(name.casefold())
        return None if account_id is None else self._by_id[account_id]

    def name(self, account_id: int) -> str:
        account = self._by_id.get(account_id)
        return account.name if account else f"player {account_id}"

    def add(self, row: AccountRow) -> Account:
        account = Account(
            row.id,
            row.name,
            row.password_hash,
            created=row.created,
            role=row.role,
            revision=row.revision,
            ban=Ban(row.ban_reason, row.ban_until) if row.ban_reason else None,
            last_seen=row.last_seen,
        )
        self._by_id[row.id] = account
        self._by_name[row.name.casefold()] = row.id
        self.next_id = max(self.next_id, row.id + 1)
        return account

    def forget(self, account_id: int) -> None:
        """An account whose record could not be stored never existed."""
        account = self._by_id.pop(account_id, None)
        if account is not None:
            self._by_name.pop(account.name.casefold(), None)

    def put_back(self, row: AccountRow) -> None:
        """The account as ``row`` has it (a change the store refused is undone): its name
        back too, unless another account took it meanwhile."""
        account = self._by_id.get(row.id)
        if account is None:
            self.add(row)
            return
        if row.name != account.name and self._by_name.get(row.name.casefold(), row.id) == row.id:
            self.rename(account, row.name)
        account.password_hash = row.password_hash
        account.role = row.role
        account.revision = row.revision
        account.ban = Ban(row.ban_reason, row.ban_until) if row.ban_reason else None
        account.last_seen = row.last_seen

    def rename(self, account: Account, name: str) -> None:
        """The account is known by ``name`` from now on (its old name is free again)."""
        self._by_name.pop(account.name.casefold(), None)
        account.name = name
        self._by_name[name.casefold()] = account.id

    def seen(self, account: Account, now: float) -> None:
        """The account signed in or out at ``now``. Stored later, with the others seen meanwhile
        (``seen_rows``, at the next tick): a sign-in is not held back by a commit of its own."""
        account.last_seen = now
        self._seen.add(account.id)

    def seen_rows(self) -> list[AccountSeen]:
        """When each account seen since the last call was seen, to store (its last_seen
        alone: a failed commit of these undoes nothing else)."""
        rows = [
            AccountSeen(account_id, seen)
            for account_id in sorted(self._seen)
            if account_id in self._by_id and (seen := self._by_id[account_id].last_seen) is not None
        ]
        self._seen.clear()
        return rows

    def rate(self, row: RatingRow) -> None:
        """An account's rating for a game type (unknown accounts are skipped)."""
        account = self._by_id.get(row.account_id)
        if account is not None:
            account.ratings[row.game_type] = (row.mu, row.sigma, row.games)

    def unrate(self, account_id: int, game_type: str) -> None:
        account = self._by_id.get(account_id)
        if account is not None:
            account.ratings.pop(game_type, None)
