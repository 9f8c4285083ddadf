"""The analytic standard error of a mean when units come in clusters (Miller 2024, "Adding
Error Bars to Evals", eq. 4): the plain CLT variance plus the covariance of units that share a
cluster, i.e. the cluster-robust (CR0) variance of a mean, sum over clusters of the squared
sum of residuals, over n squared. With one unit per cluster it is the plain CLT standard error
(population variance over n)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from statistics import NormalDist

import numpy as np

Z95 = NormalDist().inv_cdf(0.975)
"""The normal quantile of a two-sided 95% interval (the standard library's, so scoring does
not import scipy)."""


def clustered_se(values: Sequence[float], clusters: Sequence[Hashable]) -> float:
    """sqrt(sum_c (sum_{i in c} (x_i - mean))^2) / n; NaN without values."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return float("nan")
    residual = x - x.mean()
    _, which = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)
    sums = np.bincount(which, weights=residual)
    return float(np.sqrt(np.sum(sums**2)) / x.size)


def plain_se(values: Sequence[float]) -> float:
    """The CLT standard error of a mean, sqrt(population variance / n)."""
    x = np.asarray(values, dtype=np.float64)
    return float(np.sqrt(x.var() / x.size)) if x.size else float("nan")


def normal_interval(estimate: float, se: float, z: float = Z95) -> tuple[float, float]:
    """estimate +- z se."""
    return (estimate - z * se, estimate + z * se)


__all__ = ["Z95", "clustered_se", "normal_interval", "plain_se"]
