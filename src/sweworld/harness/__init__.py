"""The docker-free, SWE-bench-compatible harness: apply, test, parse, grade, report.

Modules (one concept each):

- ``patches``: which paths a patch touches, refusing unsafe ones, the apply chain
  (``git apply -v`` -> ``git apply --reject`` -> ``patch --batch --fuzz=5 -p1``).
- ``directives``: the test files / labels a task's test command runs on.
- ``evalscript``: the eval script (test patch, markers with a per-run nonce, exit code).
- ``grade``: parse the test output with the ``swebench`` parsers, grade FULL/PARTIAL/NO.
- ``report``: the per-instance report and the run summary in SWE-bench's layout.
- ``evaluate``: one instance through an ``Executor``; ``compare``, ``predictions``: verdicts and inputs.

Runs over many instances (``runs.eval``, ``runs.validate``) live in ``sweworld.runs``.

Everything runs through an ``Executor``, so a simulated world can answer the same calls.
"""
