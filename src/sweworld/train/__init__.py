"""Training entry points on TRL (the optional ``train`` extra): ``sft`` fine-tunes a causal LM on the
chat rows the exporters write (policy, SWT, SWR, verifier), LoRA optional; ``rows`` reads and checks
those rows; ``tiny`` builds a tiny model from a config for smoke tests. Nothing here imports torch,
transformers or trl at import time: ``import sweworld`` and the CLI work without the extra, and
training without it stops with ``pip install 'sweworld[train]'``. See docs/data.md ("Training")."""
