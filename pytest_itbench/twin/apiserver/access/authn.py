"""Authentication: bearer tokens to users, as the API server's token authenticator does."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field

ADMIN_USER = "kubernetes-admin"


@dataclass(frozen=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def is_service_account(self) -> bool:
        return self.name.startswith("system:serviceaccount:")

    def to_dict(self) -> dict:
        out: dict = {"username": self.name, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        if self.extra:
            out["extra"] = self.extra
        return out


ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))


def user_for(identity: str, groups: tuple[str, ...] = ()) -> UserInfo:
    """The UserInfo a real cluster gives an identity.

    ``system:serviceaccount:<ns>:<name>`` gets the service-account groups;
    the admin identity is in ``system:masters`` (as kubeadm's admin.conf is).
    """
    all_groups = list(groups)
    if identity.startswith("system:serviceaccount:"):
        ns = identity.split(":")[2]
        all_groups += ["system:serviceaccounts", f"system:serviceaccounts:{ns}"]
    all_groups.append("system:authenticated")
    uid = hashlib.sha256(identity.encode()).hexdigest()[:32]
    uid = f"{uid[:8]}-{uid[8:12]}-{uid[12:16]}-{uid[16:20]}-{uid[20:32]}"
    seen: list[str] = []
    for g in all_groups:
        if g not in seen:
            seen.append(g)
    return UserInfo(identity, uid, tuple(seen))


class TokenAuthenticator:
    """Bearer token -> UserInfo. Tokens are random strings drawn from the twin's generator."""

    def __init__(self, rng):
        self._rng = rng
        self._tokens: dict[str, UserInfo] = {}
        self._lock = threading.Lock()

    def issue(self, user: UserInfo) -> str:
        alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
        with self._lock:
            for token, existing in self._tokens.items():
                if existing == user:
                    return token
            token = "".join(self._rng.choice(alphabet) for _ in range(40))
            self._tokens[token] = user
            return token

    def alias(self, token: str, existing: str) -> None:
        """Make ``token`` authenticate as the holder of ``existing`` (e.g. a JWT wrapping it)."""
        with self._lock:
            self._tokens[token] = self._tokens[existing]

    def revoke_where(self, predicate) -> None:
        with self._lock:
            for token in [t for t, u in self._tokens.items() if predicate(u)]:
                del self._tokens[token]

    def authenticate(self, authorization: str | None) -> UserInfo | None:
        """``None`` for a bad token; ANONYMOUS when no credentials are sent."""
        if not authorization:
            return ANONYMOUS
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return None
        return self._tokens.get(token.strip())
