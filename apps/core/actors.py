"""Who did something: recorded on every history row."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Actor:
    kind: str  # "api_key" | "user" | "system"
    id: str
    label: str

    @classmethod
    def system(cls, label: str = "system") -> "Actor":
        return cls(kind="system", id="", label=label)

    @classmethod
    def for_api_key(cls, api_key) -> "Actor":
        return cls(kind="api_key", id=str(api_key.pk), label=f"{api_key.name} ({api_key.prefix})")

    @classmethod
    def for_user(cls, user) -> "Actor":
        return cls(kind="user", id=str(user.pk), label=user.get_username())
