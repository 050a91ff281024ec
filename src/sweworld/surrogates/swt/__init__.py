"""Embedded world models: CPU-only surrogates trained on real traces, every prediction with a
confidence (issue 12). ``EmbeddedSWT`` predicts code execution (replay, structured test output,
nearest recorded step); ``create_model("embedded", config)`` serves it as a ``WorldModel``."""

from sweworld.surrogates.swt.model import EmbeddedSWT
from sweworld.surrogates.swt.predictor import GoldTouchPredictor, TestOutcomePredictor
from sweworld.surrogates.swt.structured import SWTPrediction

__all__ = ["EmbeddedSWT", "GoldTouchPredictor", "SWTPrediction", "TestOutcomePredictor"]
