"""Data contract: tokenization, loss masking, skipping, validation errors, HL-Gauss targets."""

import json
import os

import numpy as np
import pytest
import torch

from mavtrain import data as D
from mavtrain.models import MavLM, ModelConfig
from mavtrain.tasks import LMTask, hl_gauss_targets
from synthetic import make_data_dir, write_tokenizer


def _write(path, records):
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def test_lm_sequence_is_prompt_target_eos(tmp_path):
    tok_path = str(tmp_path / "tokenizer.json")
    vocab = write_tokenizer(tok_path)
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(tok_path)
    _write(tmp_path / "lm.jsonl", [{"prompt": "w1 w2 w3", "target": "w4 <ctrl5>", "kind": "mav", "source": "book"}])
    d = D.load_lm_split(str(tmp_path / "lm.jsonl"), tok, vocab["<eos>"], 100)
    assert d.seq(0).tolist() == [vocab["w1"], vocab["w2"], vocab["w3"], vocab["w4"], vocab["<ctrl5>"], vocab["<eos>"]]
    assert d.prompt_lens.tolist() == [3]
    inp, lab = D.lm_batch(d, np.array([0]), vocab["<pad>"])
    # inputs drop the last token; labels: nothing for predicting prompt tokens, then w4, <ctrl5>, <eos>
    assert inp.tolist() == [[vocab["w1"], vocab["w2"], vocab["w3"], vocab["w4"], vocab["<ctrl5>"]]]
    assert lab.tolist() == [[-100, -100, vocab["w4"], vocab["<ctrl5>"], vocab["<eos>"]]]


def test_too_long_sequences_are_skipped_and_counted(tmp_path):
    tok_path = str(tmp_path / "tokenizer.json")
    vocab = write_tokenizer(tok_path)
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(tok_path)
    recs = [
        {"prompt": "w1 w2", "target": "w3", "kind": "mav"},  # 4 tokens with eos
        {"prompt": "w1 w2 w3", "target": "w3", "kind": "search"},  # 5 tokens
    ]
    _write(tmp_path / "lm.jsonl", recs)
    d = D.load_lm_split(str(tmp_path / "lm.jsonl"), tok, vocab["<eos>"], 4)
    assert len(d) == 1 and d.skipped_too_long == 1 and d.kinds == {"mav": 1}


def test_loss_masking_ignores_the_prompt(tmp_path):
    """Gradients reach only the logits that predict target tokens and <eos>."""
    make_data_dir(str(tmp_path), n_train=6, n_val=2)
    meta = D.read_meta(str(tmp_path))
    mcfg = ModelConfig(d_model=16, num_layers=1, num_heads=2, d_ff=32, context_length=64)
    task = LMTask(str(tmp_path), meta, {}, mcfg)
    idx = np.arange(4)
    inp, lab = task.batch("train", idx, "cpu")
    logits = torch.randn(*inp.shape, mcfg.vocab_size, requires_grad=True)

    class Fixed(torch.nn.Module):
        def forward(self, x):
            return logits

    loss, stats, counts = task.loss(Fixed(), (inp, lab))
    loss.backward()
    g = logits.grad.abs().sum(-1)  # [B, T]
    for r, i in enumerate(idx):
        p = int(task.train.prompt_lens[i])
        n = len(task.train.seq(i)) - 1
        assert torch.all(g[r, : p - 1] == 0), "prompt positions got gradient"
        assert torch.all(g[r, p - 1 : n] > 0), "target positions got no gradient"
        assert torch.all(g[r, n:] == 0), "padding got gradient"
    # and the loss is the mean CE over exactly those positions
    sel = lab != -100
    ref = torch.nn.functional.cross_entropy(logits[sel], lab[sel])
    assert loss.item() == pytest.approx(ref.item(), rel=1e-6)
    assert counts["loss_tokens"] == int(sel.sum())


def test_prompt_content_does_not_change_masked_loss_terms():
    """Changing a prompt-predicting position's logits leaves the loss unchanged."""
    lab = torch.tensor([[-100, -100, 5, 6]])
    base = torch.randn(1, 4, 10)
    changed = base.clone()
    changed[0, :2] += 100 * torch.randn(2, 10)
    f = lambda lg: torch.nn.functional.cross_entropy(lg.flatten(0, 1), lab.flatten(), ignore_index=-100)
    assert f(base).item() == pytest.approx(f(changed).item())


def test_hl_gauss_targets():
    wp = torch.tensor([0.0, 0.3, 0.999, 0.5])
    t = hl_gauss_targets(wp, 64, 0.75)
    assert torch.allclose(t.sum(-1), torch.ones(4), atol=1e-5)
    assert t.argmax(-1).tolist() == [0, int(0.3 * 64), 63, 32] or t.argmax(-1).tolist() == [0, int(0.3 * 64), 63, 31]
    assert (t >= 0).all()


def test_missing_meta_is_a_clear_error(tmp_path):
    with pytest.raises(D.DataError, match="mavboard datagen render"):
        D.read_meta(str(tmp_path))


@pytest.mark.parametrize(
    "record,msg",
    [
        ({"ids": [1, 2, 3], "move_pos": [2], "buckets": [1], "wp": [0.5], "best": 1}, "best=1"),
        ({"ids": [1, 2, 3], "move_pos": [5], "buckets": [1], "wp": [0.5], "best": 0}, "move_pos outside"),
        ({"ids": [1, 2, 3], "move_pos": [2], "buckets": [64], "wp": [0.5], "best": 0}, "bucket outside"),
        ({"ids": [1, 2, 3], "move_pos": [2, 1], "buckets": [1], "wp": [0.5], "best": 0}, "lengths"),
        ({"ids": [1, 2, 3], "buckets": [1], "wp": [0.5], "best": 0}, "lacks"),
    ],
)
def test_bad_encoder_records_are_rejected(tmp_path, record, msg):
    _write(tmp_path / "enc.jsonl", [record])
    with pytest.raises(D.DataError, match=msg):
        D.load_enc_split(str(tmp_path / "enc.jsonl"), 64, 100)


def test_bad_av_records_are_rejected(tmp_path):
    _write(tmp_path / "av.jsonl", [{"state_ids": [0] * 76, "action_ids": [1], "buckets": [1]}])
    with pytest.raises(D.DataError, match="76 state ids"):
        D.load_av_split(str(tmp_path / "av.jsonl"), 32, 1968, 128)
    _write(tmp_path / "av.jsonl", [{"state_ids": [0] * 77, "action_ids": [1968], "buckets": [1]}])
    with pytest.raises(D.DataError, match="action id outside"):
        D.load_av_split(str(tmp_path / "av.jsonl"), 32, 1968, 128)


def test_av_records_expand_to_one_example_per_move(tmp_path):
    _write(tmp_path / "av.jsonl", [{"state_ids": list(range(77)), "action_ids": [3, 9], "buckets": [10, 20]}])
    d = D.load_av_split(str(tmp_path / "av.jsonl"), 100, 1968, 128)
    inp, bk = D.av_batch(d, np.array([1, 0]))
    assert inp.shape == (2, 78) and inp[0, 77] == 9 and inp[1, 77] == 3 and bk.tolist() == [20, 10]
    assert inp[0, :77].tolist() == list(range(77))


def test_zst_and_plain_files_read_alike(tmp_path):
    import zstandard

    recs = [{"a": i} for i in range(5)]
    text = "".join(json.dumps(r) + "\n" for r in recs).encode()
    (tmp_path / "x.jsonl").write_bytes(text)
    (tmp_path / "y.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(text))
    assert list(D.iter_jsonl(str(tmp_path / "x.jsonl"))) == list(D.iter_jsonl(str(tmp_path / "y.jsonl.zst"))) == recs


def test_lm_training_and_inference_paths_agree():
    """forward_with_past with an empty cache equals the training forward (same weights)."""
    torch.manual_seed(0)
    cfg = ModelConfig(d_model=32, num_layers=2, num_heads=4, d_ff=64, context_length=64, vocab_size=50)
    m = MavLM(cfg).eval()
    ids = torch.randint(0, 50, (2, 9))
    past = [(torch.zeros(2, 4, 0, 8), torch.zeros(2, 4, 0, 8)) for _ in range(2)]
    with torch.no_grad():
        a = m(ids)
        b, pres = m.forward_with_past(ids, torch.ones(2, 9, dtype=torch.long), torch.arange(9).expand(2, 9), past)
    assert torch.allclose(a, b, atol=1e-5)
    assert pres[0][0].shape == (2, 4, 9, 8)
