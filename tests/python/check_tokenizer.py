"""Checks that the Hugging Face export of the MAV tokenizer encodes exactly as mavboard does.

Usage: python tests/python/check_tokenizer.py tokenizer.json examples.jsonl

tokenizer.json comes from `mavboard mav tokenizer -o tokenizer.json`, examples.jsonl from
`mavboard mav sample -o examples.jsonl` (JSON lines with "text" and the Rust "ids"). For every line the
script checks encode(text).ids == ids and decode(ids, skip_special_tokens=False) == text, and exits 1 on the
first difference (texts with characters outside the vocabulary encode to <unk> and are only compared
by ids). Needs the `tokenizers` package.
"""

import json
import sys

from tokenizers import Tokenizer


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    tok = Tokenizer.from_file(sys.argv[1])
    unk = tok.token_to_id("<unk>")
    checked = 0
    with open(sys.argv[2], encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            ex = json.loads(line)
            text, ids = ex["text"], ex["ids"]
            got = tok.encode(text).ids
            if got != ids:
                first = next(i for i in range(min(len(got), len(ids)) + 1) if i >= min(len(got), len(ids)) or got[i] != ids[i])
                print(f"line {n}: ids differ at position {first}: python {got[first:first + 8]} rust {ids[first:first + 8]}")
                return 1
            back = tok.decode(ids, skip_special_tokens=False)
            if unk not in ids and back != text:
                print(f"line {n}: decode differs:\n{back!r}\n{text!r}")
                return 1
            checked += 1
    print(f"ok: {checked} texts encode to the same ids in Python and Rust, and decode back exactly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
