"""The store: one interface over SQLite or PostgreSQL (see ../shared/DESIGN.md, "The store")."""

from evalcore import lazy_exports

# Imported on first use: a command or page loads only the modules it touches.
__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "evalcore.store.engine": ("redact",),
        "evalcore.store.location": (
            "DATABASE_URL_ENV",
            "database_url",
        ),
        "evalcore.store.store": (
            "ProjectInfo",
            "Revision",
            "Store",
        ),
    },
)
