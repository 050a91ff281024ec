"""Embedded world models: CPU-only surrogates trained on real traces, every prediction with a
confidence (issue 12). ``EmbeddedSWT`` predicts code execution (replay, structured test output,
nearest recorded step); ``create_model("embedded", config)`` serves it as a ``WorldModel``."""

from sweworld.world.embedded.model import EmbeddedSWT
from sweworld.world.embedded.predictor import GoldTouchPredictor, TestOutcomePredictor
from sweworld.world.embedded.structured import Prediction

__all__ = ["EmbeddedSWT", "GoldTouchPredictor", "Prediction", "TestOutcomePredictor"]
