"""Verifiers and best-of-n selection (issue 13): score each sample, pick the best per instance,
measure best@k against pass@k. ``sweworld select`` is the command, ``sweworld verifier train`` trains
the embedded verifier; docs/data.md."""

from sweworld.verify.bestofn import Scored, Selection, best_at_k, curve_rows, pick, predictions, select
from sweworld.verify.section import bestofn_section
from sweworld.verify.verifiers import (
    VERIFIERS,
    OracleVerifier,
    RandomVerifier,
    SWRVerifier,
    Verifier,
    create_verifier,
)

__all__ = ["VERIFIERS", "OracleVerifier", "RandomVerifier", "SWRVerifier", "Scored", "Selection", "Verifier",
           "best_at_k", "bestofn_section", "create_verifier", "curve_rows", "pick", "predictions", "select"]
