"""`sweworld train sft` on exported rows, on this machine's CPU with a tiny model built from a config:
what the rows cost in tokens, and full fine-tuning against LoRA on rows cut to --max-length (tokens per second and their ratio,
the loss before and after), measured in one run.

    python benchmarks/train_sft.py [--data runs/demo/data/sft.jsonl runs/demo/data/world/swt.jsonl ...]
        [--steps 8] [--max-length 1024] [--threads 1]

Defaults to the files `make demo` writes (runs/demo/data). The tiny model learns nothing useful; the
figures are of the training path (rendering, tokenizing, TRL's loop) on CPU, not of a real model.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from sweworld.train.rows import kinds, load_rows
from sweworld.train.sft import SFTTrainOptions, train_sft
from sweworld.train.tiny import build_tiny_for

DEMO = Path("runs/demo/data")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="+", type=Path,
                        default=[DEMO / "sft.jsonl", DEMO / "world" / "swt.jsonl", DEMO / "world" / "swr.jsonl"])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--max-length", type=int, default=1024)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (1: shared machines)")
    args = parser.parse_args()

    import torch
    from transformers import AutoTokenizer

    torch.set_num_threads(args.threads)
    rows = load_rows(args.data)
    with tempfile.TemporaryDirectory() as tmp:
        tiny = build_tiny_for(Path(tmp) / "tiny", rows)
        tokenizer = AutoTokenizer.from_pretrained(tiny)
        lengths = [len(tokenizer.apply_chat_template(r.messages, tools=r.tools, tokenize=True, return_dict=True)
                       ["input_ids"]) for r in rows]
        print(f"rows {len(rows)} {kinds(rows)}; tokens per row (tiny BPE, {len(tokenizer)} tokens): median "
              f"{statistics.median(lengths):.0f}, longest {max(lengths)}; over --max-length {args.max_length}: "
              f"{sum(n > args.max_length for n in lengths)}")
        speed = {}
        for lora in (False, True):
            summary = train_sft(args.data, SFTTrainOptions(
                model=str(tiny), out=Path(tmp) / ("lora" if lora else "full"), lora=lora, max_steps=args.steps,
                batch_size=2, learning_rate=3e-2 if lora else 1e-2, max_length=args.max_length, too_long="cut",
                logging_steps=1))
            seen = summary.tokens / summary.rows_trained * 2 * summary.steps  # tokens the steps saw, on average
            speed[lora] = seen / summary.seconds
            print(f"{'lora' if lora else 'full'}: {summary.steps} steps in {summary.seconds:.1f} s, "
                  f"~{speed[lora]:.0f} tokens/s, loss {summary.losses[0]:.3f} -> {summary.losses[-1]:.3f}, "
                  f"rows cut at --max-length: {summary.too_long}")
        print(f"ratio lora/full tokens per second: {speed[True] / speed[False]:.2f}")


if __name__ == "__main__":
    main()
