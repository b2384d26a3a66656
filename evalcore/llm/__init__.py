"""The model layer: every model call of every pipeline goes through here (../shared/DESIGN.md, "Models").

- `ModelClient(store, project_id, run_id=None, budget=None)`: `run_task`, `run_batch`, `complete`, `embed`;
  owns the cache, retries, accounting, budget and concurrency, for every provider (offline included).
- `Task` (tasks.py): prompt template + pydantic output + offline implementation; see its docstring for
  how to add one. Tasks live with the stage that needs them (evalcore/documents/entity_task.py is a
  short example), never here: this layer knows no pipeline.
- `Registry` (registry.py): providers by name, models by role, from the environment and project settings.
- guard.py: the self-preference guard for judges; status.py: what the Settings page shows and changes.
"""

from evalcore.llm.accounting import Budget, PriceTable
from evalcore.llm.client import ModelClient
from evalcore.llm.guard import JudgeChoice, choose_judge, guard_judge, same_model
from evalcore.llm.registry import OFFLINE_MODEL, Registry, RoleChoice
from evalcore.llm.retry import RetryPolicy
from evalcore.llm.tasks import TASKS, Task
from evalcore.llm.types import (
    ROLES,
    BudgetExceeded,
    Completion,
    ConfigError,
    Message,
    ModelCallError,
    Request,
    Response,
    TaskResult,
)

__all__ = [
    "OFFLINE_MODEL",
    "ROLES",
    "TASKS",
    "Budget",
    "BudgetExceeded",
    "Completion",
    "ConfigError",
    "JudgeChoice",
    "Message",
    "ModelCallError",
    "ModelClient",
    "PriceTable",
    "Registry",
    "Request",
    "Response",
    "RetryPolicy",
    "RoleChoice",
    "Task",
    "TaskResult",
    "choose_judge",
    "guard_judge",
    "same_model",
]
