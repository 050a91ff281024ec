"""The docker-free, SWE-bench-compatible harness: apply, test, parse, grade, report, validate.

Modules (one concept each):

- ``patches``: which paths a patch touches, refusing unsafe ones, the apply chain
  (``git apply -v`` -> ``git apply --reject`` -> ``patch --batch --fuzz=5 -p1``).
- ``directives``: the test files / labels a task's test command runs on.
- ``evalscript``: the eval script (test patch, markers with a per-run nonce, exit code).
- ``grade``: parse the test output with the ``swebench`` parsers, grade FULL/PARTIAL/NO.
- ``report``: the per-instance report and the run summary in SWE-bench's layout.
- ``evaluate``/``run``: one instance in a fresh episode; a parallel, resumable run.
- ``validate``: SWE-Gym-style validation of instances (no patch vs gold, flaky tests dropped).

Everything runs through an ``Executor``, so a simulated world can answer the same calls.
"""
