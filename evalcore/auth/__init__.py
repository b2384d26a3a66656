"""Who acts: built-in accounts, signed-in sessions, roles and the audit trail (../shared/DESIGN.md, "A team
on one server"). It sits just above the store: every stage that changes something asks it first.

One person on a laptop is the local actor, who holds every role; a team's dashboard signs people in
(built-in accounts or OIDC) and passes the signed-in actor to every library call that changes something.
"""

from evalcore import lazy_exports

# Imported on first use: argon2 loads only where a password is checked.
__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "evalcore.auth.roles": (
            "LOCAL",
            "Actor",
            "Permission",
            "PermissionDenied",
            "Role",
            "author_for",
            "require",
        ),
        "evalcore.auth.audit": ("acting_author", "authorize", "authorized", "importing", "record"),
    },
)
