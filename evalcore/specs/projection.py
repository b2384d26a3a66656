"""2D maps of spec embeddings for the diversity page: UMAP, with PCA when there are too few points, and the
placement of new points on a fitted map by their nearest neighbours (evalcore.specs.spec_map runs both)."""

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


# How many fitted neighbours place a new point: enough to average out one odd neighbour, few enough to
# stay inside its cluster.
NEIGHBOURS = 5


def place_by_neighbours(
    fitted: np.ndarray, points: np.ndarray, new: np.ndarray, k: int = NEIGHBOURS
) -> np.ndarray:
    """2D positions of `new` embeddings on a map fitted on `fitted` (whose positions are `points`): each
    at the mean of its k most cosine-similar fitted points, weighted by similarity. Not UMAP's own
    transform (its fitted model would have to be kept between processes); close to it where a new spec
    resembles some fitted ones, which is what nearby points on the map mean."""
    fitted, points, new = (np.asarray(a, dtype=float) for a in (fitted, points, new))
    if len(new) == 0:
        return np.zeros((0, 2))
    if len(fitted) == 0:
        raise ValueError("no fitted points to place new ones by")

    def unit(x: np.ndarray) -> np.ndarray:
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    similarity = unit(new) @ unit(fitted).T
    k = min(k, len(fitted))
    nearest = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
    weights = np.maximum(np.take_along_axis(similarity, nearest, axis=1), 0.0) + 1e-6
    return np.einsum("mk,mkd->md", weights, points[nearest]) / weights.sum(axis=1, keepdims=True)
