"""Training data: SFT rows from rollouts (``sft``), SWT/SWR rows from traces (``world``) with
reverse-reasoning chain of thought (``cot``), chat formats (``formats``) and token counts (``tokens``).
See docs/data.md."""
