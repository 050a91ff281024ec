"""A tiny causal LM built from a config, no download: a smoke test of the training path on CPU.

``build_tiny(directory, texts)`` trains a byte-level BPE tokenizer on ``texts`` (every text encodes,
nothing is unknown; up to ``vocab_size`` tokens, fewer when the texts run out of merges), gives it the ChatML-with-tools template (``templates/chatml_tools.j2``)
and writes it with a randomly initialised Qwen2 model of a few thousand parameters per layer, both
in the Hugging Face layout ``--model`` reads. It learns nothing useful: it shows that rows render,
tokenize, train, save and load back.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from sweworld.train.deps import require
from sweworld.train.rows import row_texts

SPECIAL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
EOS, PAD = "<|im_end|>", "<|endoftext|>"
TEMPLATE = Path(__file__).with_name("templates") / "chatml_tools.j2"


def chat_template() -> str:
    """The ChatML-with-tools template (assistant turns in ``{% generation %}`` markers)."""
    return TEMPLATE.read_text()


def build_tiny(directory: Path, texts: Iterable[str], *, vocab_size: int = 4096, hidden: int = 32, layers: int = 2,
               seed: int = 0, template: str | None = None) -> Path:
    """Write a tiny tokenizer + model trained on nothing but ``texts``' vocabulary into ``directory``
    (``template``: its chat template, default the ChatML-with-tools one)."""
    require()
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=list(SPECIAL), initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token=EOS, pad_token=PAD)
    tokenizer.chat_template = template or chat_template()
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=32768, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=None)
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_tiny_for(directory: Path, rows: Iterable[dict], **options) -> Path:
    """``build_tiny`` with the vocabulary of training rows (messages, tool calls, tool schemas)."""
    return build_tiny(directory, (text for row in rows for text in row_texts(row)), **options)
