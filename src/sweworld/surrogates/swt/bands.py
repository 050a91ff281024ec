"""Confidence bands and a prediction's calibrated confidence (the table ``calibrate.calibration``
builds): below both what calibrates (``calibrate``) and what applies the table (``model``)."""

from __future__ import annotations

from sweworld.surrogates.swt.structured import SWTPrediction

BANDS = (0.5, 0.8)


def band(confidence: float) -> int:
    return sum(confidence >= edge for edge in BANDS)


def path_of(prediction: SWTPrediction) -> str:
    """The prediction path, with ``+predicted`` when the per-test predictor decided a test (the
    recorded and listed statuses are surer than the predictor's)."""
    predicted = (prediction.detail.get("why") or {}).get("predicted")
    return f"{prediction.source}+predicted" if predicted else prediction.source


def calibrated(table: dict[str, float], prediction: SWTPrediction) -> float:
    """The calibrated confidence of a prediction: its path's band, its path, its source's band, its
    source, the first the table has (replays and unknown paths keep their own)."""
    if prediction.source == "replay":
        return prediction.confidence
    level = band(prediction.confidence)
    for key in (f"{path_of(prediction)}:{level}", path_of(prediction), f"{prediction.source}:{level}",
                prediction.source):
        if key in table:
            return table[key]
    return prediction.confidence


__all__ = ["BANDS", "band", "calibrated", "path_of"]
