"""Targets: the systems under test, configured per project, and the adapters that reach them.

save_target(store, pid, Target(name="bot", kind="openai", config={"base_url": ..., "model": ...}))
adapter = build_adapter(store, pid, get_target(store, pid, "bot"), ModelClient(store, pid))
adapter.reply([Message("user", "Hi")]).text
"""

from evalcore.targets.adapters import (
    TargetAdapter,
    TargetCrash,
    TargetReply,
    build_adapter,
    fill_template,
    lookup,
)
from evalcore.targets.config import (
    CONFIGS,
    DEMO_NAME,
    TargetConfigError,
    demo_target,
    describe,
    get_target,
    list_targets,
    parse_config,
    remove_target,
    run_naming,
    save_target,
    validate_target,
)

__all__ = [
    "CONFIGS",
    "DEMO_NAME",
    "TargetAdapter",
    "TargetConfigError",
    "TargetCrash",
    "TargetReply",
    "build_adapter",
    "demo_target",
    "describe",
    "fill_template",
    "get_target",
    "list_targets",
    "lookup",
    "parse_config",
    "remove_target",
    "run_naming",
    "save_target",
    "validate_target",
]
