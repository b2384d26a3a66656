"""A real model on this machine, no key: llama.cpp's OpenAI-compatible server (the prebuilt `xllamacpp`
wheel) on 127.0.0.1, and the project's roles pointed at it through the `local` provider.

Settings for a small CPU machine: one thread (on 2 shared cores, two threads stall each other whenever
another process holds a core: issue 32 measured 1 thread faster), one slot (calls queue rather than split
the core), a context of 4,096 tokens (a task's prompt with a few documents fits; more costs memory and
prompt time), and token caps per task in the model's profile, so that no reply runs for minutes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evalcore.llm.profiles import profile_for
from evalcore.llm.registry import LOCAL_TIMEOUT
from evalcore.llm.status import probe_model, set_model_profile, set_provider, set_role_model
from evalcore.llm.types import ROLES, ConfigError
from evalcore.store import Store

PROVIDER = "local"
DEFAULT_PORT = 8765
# A cap for every task of the local model, and lower ones for tasks whose output is short: at ~8 tokens/s
# 512 tokens are a minute, and a small model that loses the thread repeats itself to the cap.
MAX_TOKENS = 512
TASK_MAX_TOKENS = {
    "judge_turn": 192,
    "judge_criterion": 192,
    "judge_tool_case": 192,
    "detect_breakdown": 256,
    "simulate_user_turn": 160,
    "extract_entities": 320,
}


@dataclass(frozen=True)
class ServeOptions:
    """How llama.cpp's server runs."""

    port: int = DEFAULT_PORT
    """Port on 127.0.0.1."""
    threads: int = 1
    """CPU threads for prompt and generation."""
    ctx: int = 4096
    """Context size in tokens (prompt and reply)."""

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL of the server."""
        return f"http://127.0.0.1:{self.port}/v1"


def model_name(gguf: Path) -> str:
    """The name the roles use for a GGUF file: its stem, lower-cased ('local/<name>')."""
    return gguf.stem.lower()


def start(gguf: Path, options: ServeOptions) -> Any:
    """A running llama.cpp server for `gguf` (an `xllamacpp.Server`; it stops when released)."""
    if not gguf.is_file():
        raise ConfigError(f"{gguf}: no such model file")
    try:
        import xllamacpp
    except ImportError:
        raise ConfigError("the local model needs the 'xllamacpp' package: pip install xllamacpp") from None
    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.model_alias = model_name(gguf)
    params.n_ctx = options.ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = options.threads
    params.cpuparams_batch.n_threads = options.threads
    params.hostnames = ["127.0.0.1"]
    params.port = options.port
    try:
        return xllamacpp.Server(params)
    except Exception as e:  # the binding raises plain RuntimeErrors (port in use, a file that is no GGUF)
        raise ConfigError(f"{gguf}: llama.cpp's server did not start: {e}") from e


def point_roles(store: Store, project_id: str, gguf: Path, options: ServeOptions, probe: bool = True) -> str:
    """Point every role of the project at the local server, cap its tokens per task; the model's name.

    The first time (no probe kept in its profile) one call learns the server's structured-output mode,
    which the profile keeps from then on.
    """
    model = f"{PROVIDER}/{model_name(gguf)}"
    set_provider(store, project_id, PROVIDER, {"kind": PROVIDER, "base_url": options.base_url,
                                               "timeout_s": LOCAL_TIMEOUT})  # fmt: skip
    for role in ROLES:
        set_role_model(store, project_id, role, model)
    kept = profile_for(store.project(project_id).settings, model)
    capped = replace(kept, max_tokens=MAX_TOKENS, task_max_tokens=dict(TASK_MAX_TOKENS))
    set_model_profile(store, project_id, model, capped)
    if probe and not kept.probed_at:
        probe_model(store, project_id, model)
    return model
