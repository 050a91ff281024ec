"""The embedded SWR (issue 12): a CPU classifier over features that need no environment (the
agent's patch against the gold patch, on tokens and on the AST of the changed functions; syntax;
size; tests touched), trained on real evaluations, predicting whether a patch resolves its task.

``EmbeddedSWR`` is a drop-in for ``sweworld.world.swr.SWR`` (``SimBackend(swr=EmbeddedSWR())``) and
the embedded SWT's ``TestOutcomePredictor``; ``train`` fits one from ``EvalTrace`` records
(``sweworld world train``); a model trained on the default dataset ships in the package.
"""

from sweworld.surrogates.swr.features import FEATURES, features
from sweworld.surrogates.swr.model import SWRClassifier, fit
from sweworld.surrogates.swr.swr import EmbeddedSWR, EmbeddedSWRConfig, predictor, shipped_path

__all__ = ["FEATURES", "EmbeddedSWR", "EmbeddedSWRConfig", "SWRClassifier", "features", "fit", "predictor",
           "shipped_path"]
