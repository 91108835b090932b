"""Packed splits: the same examples as the JSON lines, smaller and faster to load; bad packs named."""

import os
import shutil

import numpy as np
import pytest

from conftest import toy_config
from mavtrain import data as D
from mavtrain import pack as P
from mavtrain.train import train


def test_a_pack_holds_the_same_examples_as_the_json_lines(data_dir, tmp_path):
    out = str(tmp_path / "packed")
    done = P.pack_dir(data_dir, out)
    assert set(done) == {"enc_train.pack", "enc_val.pack"}
    assert os.path.exists(os.path.join(out, "meta.json")) and os.path.exists(os.path.join(out, "tokenizer.json"))
    for split in ("train", "val"):
        ref = D.load_enc_split(D.split_path(data_dir, "enc", split), 64, 10_000)
        got = P.load_enc_pack(os.path.join(out, f"enc_{split}.pack"), 64, 10_000)
        assert len(got) == len(ref) == done[f"enc_{split}.pack"][0]
        for field in ("ids", "move_pos", "buckets"):
            assert all(np.array_equal(a, b) for a, b in zip(getattr(got, field), getattr(ref, field)))
        assert max(float(np.abs(a - b).max()) for a, b in zip(got.wp, ref.wp)) <= 0.5 / P.WP_SCALE + 1e-7
        assert np.array_equal(got.best, ref.best)


def test_a_pack_skips_too_long_records_and_honours_the_limit(data_dir, tmp_path):
    P.pack_dir(data_dir, str(tmp_path))
    path = str(tmp_path / "enc_train.pack")
    ref = D.load_enc_split(D.split_path(data_dir, "enc", "train"), 64, 10_000)
    cut = int(np.median([len(x) for x in ref.ids]))
    got = P.load_enc_pack(path, 64, cut)
    assert got.skipped_too_long == sum(len(x) > cut for x in ref.ids) > 0
    assert all(len(x) <= cut for x in got.ids) and len(got.best) == len(got.ids)
    assert len(P.load_enc_pack(path, 64, 10_000, limit=5)) == 5


def test_training_reads_a_packed_data_dir(data_dir, tmp_path):
    out = str(tmp_path / "packed")
    P.pack_dir(data_dir, out)
    summary = train(toy_config("mav-encoder", max_steps=3), out, str(tmp_path / "run"), device="cpu")
    assert summary["steps"] == 3 and np.isfinite(summary["val_loss"])


def test_a_broken_or_inconsistent_pack_is_named(data_dir, tmp_path):
    P.pack_dir(data_dir, str(tmp_path))
    bad = tmp_path / "bad.pack"
    bad.write_bytes(b"not xz at all")
    with pytest.raises(D.DataError, match="bad.pack is not a readable pack"):
        P.read_pack(str(bad))
    cols = P.read_pack(str(tmp_path / "enc_val.pack"))
    cols["best"] = cols["moves_len"].astype(np.uint16)  # one past the last move
    P.write_pack(cols, str(bad))
    with pytest.raises(D.DataError, match="record 1 has best="):
        P.load_enc_pack(str(bad), 64, 10_000)
    cols = P.read_pack(str(tmp_path / "enc_val.pack"))
    cols["ids"] = cols["ids"][:-1]
    P.write_pack(cols, str(bad))
    with pytest.raises(D.DataError, match="ids_len does not sum"):
        P.read_pack(str(bad))


def test_the_command_line_packs_and_reports(data_dir, tmp_path, capsys):
    assert P.main(["--data", data_dir, "--out", str(tmp_path), "--level", "3"]) == 0
    assert "enc_train.pack:" in capsys.readouterr().out
    empty = tmp_path / "empty"
    empty.mkdir()
    assert P.main(["--data", str(empty)]) == 2
    assert "no enc_train.jsonl" in capsys.readouterr().err
    shutil.rmtree(empty)


def test_text_examples_pack_to_token_ids_and_train_from_there(data_dir, tmp_path):
    from mavtrain.models import ModelConfig
    from mavtrain.tasks import LMTask

    out = str(tmp_path / "packed-lm")
    done = P.pack_dir(data_dir, out, enc=False, lm=True)
    assert set(done) == {"lm_train.pack", "lm_val.pack"}
    assert not os.path.exists(os.path.join(out, "enc_train.pack"))
    meta = D.read_meta(data_dir)
    tok = D.load_tokenizer(data_dir, meta)
    eos = D.special_ids(tok, meta["num_buckets"])["eos"]
    for split in ("train", "val"):
        path = D.split_path(data_dir, "lm", split)
        n = sum(1 for _ in D.iter_jsonl(path))
        assert done[f"lm_{split}.pack"][0] == n
        full = D.load_lm_split(path, tok, eos, 10_000)
        cut = int(np.median(np.diff(full.offsets)))
        for ctx, limit in ((10_000, None), (cut, None), (10_000, 7)):
            ref = D.load_lm_split(path, tok, eos, ctx, limit)
            got = P.load_lm_pack(os.path.join(out, f"lm_{split}.pack"), ctx, limit)
            assert len(got) == len(ref) and got.kinds == ref.kinds and got.kind_of == ref.kind_of
            assert np.array_equal(got.tokens, ref.tokens) and np.array_equal(got.offsets, ref.offsets)
            assert np.array_equal(got.prompt_lens, ref.prompt_lens)
            assert (got.skipped_too_long, got.skipped_empty) == (ref.skipped_too_long, ref.skipped_empty)
        assert P.load_lm_pack(os.path.join(out, f"lm_{split}.pack"), cut).skipped_too_long > 0
    # the trainer reads the pack where no JSON lines are, the same examples
    cfg = toy_config("mav-lm", max_steps=2)
    a = LMTask(out, meta, cfg["train"], ModelConfig.from_dict(cfg["model"]))
    b = LMTask(data_dir, meta, cfg["train"], ModelConfig.from_dict(cfg["model"]))
    assert np.array_equal(a.train.tokens, b.train.tokens) and a.val is not None
    summary = train(cfg, out, str(tmp_path / "run"), device="cpu")
    assert summary["steps"] == 2 and np.isfinite(summary["val_loss"])


def test_a_broken_text_pack_or_example_is_named(data_dir, tmp_path):
    P.pack_dir(data_dir, str(tmp_path), enc=False, lm=True)
    good = str(tmp_path / "lm_val.pack")
    whole = (tmp_path / "lm_val.pack").read_bytes()
    cut = tmp_path / "cut.pack"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(D.DataError, match="cut.pack is not a readable pack"):
        P.load_lm_pack(str(cut), 1000)
    meta = D.read_meta(data_dir)
    tok = D.load_tokenizer(data_dir, meta)
    recs = list(D.iter_jsonl(D.split_path(data_dir, "lm", "val")))
    c = P.pack_lm_records(recs, tok, 1)
    c["seq_len"] = c["seq_len"][:-1]
    bad = str(tmp_path / "bad.pack")
    P.write_pack(c, bad)
    with pytest.raises(D.DataError, match="disagree on the number of examples"):
        P.load_lm_pack(bad, 1000)
    c = P.pack_lm_records(recs, tok, 1)
    c["kind"][0] = 9
    P.write_pack(c, bad)
    with pytest.raises(D.DataError, match="names a kind that is not listed"):
        P.load_lm_pack(bad, 1000)
    with pytest.raises(D.DataError, match="example 2 lacks a text prompt or target"):
        P.pack_lm_records([{"prompt": "a", "target": "b"}, {"prompt": 3}], tok, 1, "x.jsonl")
    assert len(P.load_lm_pack(good, 1000)) > 0


def test_the_command_line_packs_text_with_lm(data_dir, tmp_path, capsys):
    assert P.main(["--data", data_dir, "--out", str(tmp_path), "--lm", "--enc", "--level", "1"]) == 0
    printed = capsys.readouterr().out
    assert "lm_train.pack:" in printed and "enc_train.pack:" in printed
    empty = tmp_path / "empty"
    empty.mkdir()
    assert P.main(["--data", str(empty), "--lm"]) == 2
    assert "no lm_train.jsonl" in capsys.readouterr().err
