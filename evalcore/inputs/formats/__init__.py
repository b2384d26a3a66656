"""Other tools' files in: one module per format, each a `read(text, shown) -> Read` of items.

The formats whose tools hold test data; `common` holds what they share (records with lines, our fields
in a format's metadata, chat messages, the items built). Storing what was read is `evalcore.items.interop`.
"""

from __future__ import annotations

from collections.abc import Callable

from evalcore.inputs.formats import (
    deepeval,
    inspect,
    langfuse,
    langsmith,
    openai_evals,
    promptfoo,
    ragas,
    tau2,
)
from evalcore.inputs.formats.common import Read

READERS: dict[str, Callable[[str, str], Read]] = {
    deepeval.NAME: deepeval.read,
    ragas.NAME: ragas.read,
    promptfoo.NAME: promptfoo.read,
    tau2.NAME: tau2.read,
    inspect.NAME: inspect.read,
    langfuse.NAME: langfuse.read,
    langsmith.NAME: langsmith.read,
    openai_evals.NAME: openai_evals.read,
}
