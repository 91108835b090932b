"""Packed encoder splits: the same examples as the JSON lines, smaller and faster to load; bad packs named."""

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
    assert set(done) == {"train", "val"}
    assert os.path.exists(os.path.join(out, "meta.json")) and os.path.exists(os.path.join(out, "tokenizer.json"))
    for split in ("train", "val"):
        ref = D.load_enc_split(D.split_path(data_dir, "enc", split), 64, 10_000)
        got = P.load_enc_pack(os.path.join(out, f"enc_{split}.pack"), 64, 10_000)
        assert len(got) == len(ref) == done[split][0]
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
