"""The interface of BORE's classifiers: a class-probability output ``π(x) = P(z = 1 | x)``."""

from __future__ import annotations

import abc

import numpy as np

__all__ = ["ProbabilisticClassifier", "tiny_training_set"]


class ProbabilisticClassifier(abc.ABC):
    """A binary classifier with a class-probability output.

    Subclasses store their settings in ``__init__`` and do all work in :meth:`fit`.
    """

    #: Whether :meth:`logit_and_grad` is available (gradient-based acquisition optimisation).
    differentiable: bool = False

    @abc.abstractmethod
    def fit(
        self,
        features: np.ndarray,
        labels: np.ndarray,
        seed: int,
        sample_weight: np.ndarray | None = None,
    ) -> None:
        """Fit on ``features`` ``(n, p)`` and boolean ``labels`` ``(n,)`` holding both classes.

        ``sample_weight`` ``(n,)``, positive, weighs each row's loss (LFBO's EI weighting);
        ``None`` weighs all rows alike.
        """

    @abc.abstractmethod
    def predict_proba(self, features: np.ndarray) -> np.ndarray:
        """``P(z = 1 | x)`` for each row of ``features``, shape ``(n,)``, in one batch call."""

    def logit_and_grad(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Logit of ``P(z = 1 | x)`` and its gradient with respect to ``features``."""
        raise NotImplementedError(f"{type(self).__name__} is not differentiable.")

    def check_params(self) -> None:  # noqa: B027 - a classifier may have nothing to check
        """Raise ``ValueError`` naming an invalid or unknown setting.

        Cheap; samplers call it when they are built, so that a typo fails at once instead of
        turning every model-based trial into a fallback.
        """
        return None


def tiny_training_set() -> tuple[np.ndarray, np.ndarray]:
    """Eight points in 2-D with both classes, for checking settings by a real fit."""
    features = np.linspace(0.0, 1.0, 16).reshape(8, 2)
    return features, np.arange(8) % 2 == 0
