"""2D maps of spec embeddings for the diversity page: UMAP, with PCA when there are too few points."""

from __future__ import annotations

import warnings

import numpy as np

# UMAP needs a neighbourhood; below this many points its layout means little, so PCA is used.
MIN_UMAP_POINTS = 15


def pca_2d(embeddings: np.ndarray) -> np.ndarray:
    """The first two principal components (zeros for a single point)."""
    x = np.asarray(embeddings, dtype=float)
    if len(x) < 2:
        return np.zeros((len(x), 2))
    centred = x - x.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    out = centred @ vt[:2].T
    return np.pad(out, ((0, 0), (0, 2 - out.shape[1])))


def map_2d(embeddings: np.ndarray, seed: int = 0) -> tuple[np.ndarray, str]:
    """(points, method): UMAP (cosine, seeded) for enough points, else PCA."""
    x = np.asarray(embeddings, dtype=float)
    if len(x) < MIN_UMAP_POINTS:
        return pca_2d(x), "PCA"
    import umap  # imported here: numba's start-up cost is paid only when a map is drawn

    reducer = umap.UMAP(n_components=2, n_neighbors=min(15, len(x) - 1), metric="cosine", random_state=seed)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="n_jobs value", category=UserWarning)  # seeded = 1 job
        return reducer.fit_transform(x), "UMAP"


def warm_up() -> None:
    """Import UMAP and compile its kernels on a tiny input (~20 s once per process), so the first real
    map is quick; the dashboard runs this in a background thread at start."""
    map_2d(np.random.default_rng(0).normal(size=(MIN_UMAP_POINTS + 5, 8)))
