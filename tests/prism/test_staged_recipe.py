"""Section 4's staged recipe (prismlib.prism.staged_recipe) on a tiny BERT, its arms (prismlib.prism.arms), Fig. 5's contrast."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from prismlib import jobcache as jobs
from prismlib.anneal import AnnealRule
from prismlib.prism import arms as continued
from prismlib.prism import attach_prism
from prismlib.prism import staged_recipe as C
from prismlib.probing import LOSS_IGNORE
from prismlib.profiles import get_profile

LENGTH, VOCAB, SPECIAL = 16, 40, (0, 1, 2, 3)  # [PAD] [CLS] [SEP] [MASK]-like ids
MASK = 3


def _tiny(seed: int = 0):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=VOCAB, hidden_size=20, num_hidden_layers=3, num_attention_heads=2, intermediate_size=24, max_position_embeddings=LENGTH
    )
    return BertForMaskedLM(config).eval()


def _inputs(n: int = 6, seed: int = 0) -> torch.Tensor:
    ids = torch.randint(4, VOCAB, (n, LENGTH), generator=torch.Generator().manual_seed(seed))
    ids[:, 0], ids[:, -1] = 1, 2
    return ids


def _cache(model, tmp_path, start: int = 2, versions: int = 2, n: int = 6):
    return C.build_state_cache(
        model, _inputs(n), start, versions, 0, SPECIAL, MASK, VOCAB, tmp_path / "states", batch_size=4, progress=False
    )


def _params(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.named_parameters()}


@pytest.mark.parametrize("where", [None, "last", [1, 2]])
def test_cached_lower_states_then_top_layers_equal_the_full_encoder(where):
    model = _tiny()
    if where is not None:
        attach_prism(model, where)
    x = _inputs(3)
    full = model.base_model(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state
    staged = C.top_states(model, C.lower_states(model, x, 2), 2)
    torch.testing.assert_close(staged, full, atol=1e-5, rtol=1e-5)


def test_a_layer_called_alone_does_not_reuse_the_last_padded_mask():
    model = _tiny()
    handle = attach_prism(model, "last")
    x = _inputs(2)
    mask = torch.ones_like(x)
    mask[0, 10:] = 0
    model.base_model(input_ids=x, attention_mask=mask)  # a padded call
    assert "attention_mask" not in handle._state
    full = model.base_model(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state
    torch.testing.assert_close(C.top_states(model, C.lower_states(model, x, 1), 1), full, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("where", [None, "last", [1, 2]])
def test_a_shared_frozen_part_encodes_padded_batches_like_the_model(where):
    from prismlib.spectral import hidden_batches

    frozen = C.FrozenPart(1)
    other = _tiny()  # another arm: same frozen part, its own top layers
    with torch.no_grad():
        for p in C.encoder_layers(other)[1:].parameters():
            p.add_(0.1)
    seqs = [_inputs(1, seed)[0, :n].tolist() for seed, n in enumerate((16, 9, 16, 12, 9))]
    list(hidden_batches(C.StagedEncoder(other.base_model, frozen), seqs, -1, batch_size=3, progress=False))
    assert len(frozen) == 5  # one state per distinct sequence
    model = _tiny()
    if where is not None:
        attach_prism(model, where)
    staged = C.StagedEncoder(model.base_model, frozen)
    for (rows, h, lengths), (rows2, h2, _) in zip(
        hidden_batches(staged, seqs, [1, 2, 3], batch_size=3, progress=False),
        hidden_batches(model.base_model, seqs, [1, 2, 3], batch_size=3, progress=False),
    ):
        assert rows == rows2
        for a, b in zip(h, h2):
            for r, n in enumerate(lengths):
                torch.testing.assert_close(a[r, :n], b[r, :n], atol=1e-5, rtol=1e-5)
    assert len(frozen) == 5  # the other arm's frozen states served this model


def test_a_shared_frozen_part_refuses_a_model_with_other_frozen_weights_and_unkept_layers():
    frozen = C.FrozenPart(2)
    staged = C.StagedEncoder(_tiny(0).base_model, frozen)
    with pytest.raises(ValueError, match="frozen part"):
        C.StagedEncoder(_tiny(1).base_model, frozen)
    out = staged(_inputs(2), torch.ones(2, LENGTH, dtype=torch.long))
    assert len(out.hidden_states) == 4
    with pytest.raises(ValueError, match="hidden state 1 lies in the shared frozen part"):
        out.hidden_states[1].float()


def test_attention_dropout_is_set_in_the_trained_layers_only():
    model = _tiny()
    C.set_attention_dropout(model, 2, 0.0)
    ps = [layer.attention.self.dropout.p for layer in C.encoder_layers(model)]
    assert ps == [0.1, 0.1, 0.0]
    assert all(layer.output.dropout.p == 0.1 for layer in C.encoder_layers(model))


def test_state_cache_holds_every_masking_and_resumes(tmp_path, monkeypatch):
    model = _tiny()
    straight = _cache(model, tmp_path / "a")
    assert straight.states.shape == (2, 6, LENGTH, 20) and straight.labels.shape == (2, 6, LENGTH)
    assert (straight.labels != LOSS_IGNORE).any() and not np.array_equal(straight.labels[0], straight.labels[1])
    calls = {"n": 0}
    real = C.lower_states

    def die_on_third(*args):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(C, "lower_states", die_on_third)
    with pytest.raises(KeyboardInterrupt):
        _cache(model, tmp_path / "b")
    with pytest.raises(RuntimeError, match="incomplete"):
        C.open_state_cache(tmp_path / "b" / "states")
    monkeypatch.setattr(C, "lower_states", real)
    resumed = _cache(model, tmp_path / "b")
    np.testing.assert_array_equal(resumed.states, straight.states)
    np.testing.assert_array_equal(resumed.labels, straight.labels)


def test_a_changed_state_cache_is_refused_when_opened_and_rebuilt_when_built_again(tmp_path, capsys):
    from prismlib.artifacts import CorruptArtifact

    model = _tiny()
    straight = np.array(_cache(model, tmp_path).states)
    folder = tmp_path / "states"
    raw = bytearray((folder / "states.npy").read_bytes())
    raw[-7] ^= 0x40  # one value of the last row
    (folder / "states.npy").write_bytes(bytes(raw))
    with pytest.raises(CorruptArtifact, match="states.npy: changed since written"):
        C.open_state_cache(folder)
    rebuilt = _cache(model, tmp_path)
    assert "moved aside" in capsys.readouterr().err
    np.testing.assert_array_equal(rebuilt.states, straight)
    assert len(list((tmp_path / "quarantine").glob("*states"))) == 1


def test_head_warm_up_changes_the_head_only_and_leaves_the_encoder_bit_identical(tmp_path):
    model = _tiny()
    cache = _cache(model, tmp_path)
    before = _params(model)
    feats, targets = C.head_features(model, cache, 2, progress=False)
    assert len(feats) == len(targets) == int((cache.labels != LOSS_IGNORE).sum())
    losses = C.warm_up_head(model, feats, targets, epochs=3, lr=1e-2, batch_size=16, seed=0, progress=False)
    assert losses[-1] < losses[0]
    head = {id(p) for p in C.head_parameters(model)}
    for name, p in model.named_parameters():
        if id(p) in head:
            assert not torch.equal(p, before[name]), f"{name} did not train"
        else:
            assert torch.equal(p, before[name]), f"{name} changed in the head warm-up"


def test_top_layer_training_keeps_the_frozen_layers_frozen(tmp_path):
    model = _tiny()
    cache = _cache(model, tmp_path)
    before = _params(model)
    result, previous = C.train_top(model, cache, 2, steps=4, batch_size=2, lr=1e-3, warmup=2, clip=1.0, seed=0, progress=False)
    assert previous is None and result.anneal is None and not result.converged
    assert result.steps == 4 and len(result.losses) == 4
    changed = {name for name, p in model.named_parameters() if not torch.equal(p, before[name])}
    trainable = {name for name in before if ".layer.2." in name or name.startswith("cls.")}
    assert changed <= trainable, changed - trainable  # embeddings (= tied decoder weight), layers 0-1 untouched
    assert {"bert.encoder.layer.2.attention.self.query.weight", "cls.predictions.transform.dense.weight"} <= changed


def test_a_lower_rate_for_the_pretrained_layers_moves_them_less_and_the_head_as_before(tmp_path):
    kw = dict(steps=1, batch_size=2, lr=1e-3, warmup=0, clip=1.0, seed=0, progress=False)
    models = {rate: _tiny() for rate in ("default", "same", "lower")}
    cache = _cache(models["default"], tmp_path)
    before = _params(models["default"])
    for rate, model in models.items():
        C.train_top(model, cache, 2, pretrained_lr={"default": None, "same": 1e-3, "lower": 1e-5}[rate], **kw)
    head = {name for name in before if name.startswith("cls.")}
    moved = {rate: {n: float((p.detach() - before[n]).abs().max()) for n, p in m.named_parameters()} for rate, m in models.items()}
    for name, p in models["default"].named_parameters():
        assert torch.equal(p, dict(models["same"].named_parameters())[name]), f"{name}: pretrained_lr = lr is not the default"
        if name in head:  # one step: the head's update does not depend on the layers' rate
            assert torch.equal(p, dict(models["lower"].named_parameters())[name]), name
        elif ".layer.2." in name and moved["default"][name] > 0:
            assert moved["lower"][name] < moved["default"][name] / 20, name


def test_interrupted_top_layer_training_resumes_to_the_same_weights(tmp_path, monkeypatch):
    kw = dict(steps=6, batch_size=2, lr=1e-3, warmup=2, clip=1.0, seed=3, checkpoint_every=2, progress=False)
    straight = _tiny()
    cache = _cache(straight, tmp_path)
    C.train_top(straight, cache, 2, **kw)

    killed = _tiny()
    real = C.save_atomic
    saves = {"n": 0}

    def save_then_die(path, **obj):
        real(path, **obj)
        saves["n"] += 1
        if saves["n"] == 2:
            raise KeyboardInterrupt  # killed right after the checkpoint of step 4

    monkeypatch.setattr(C, "save_atomic", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        C.train_top(killed, cache, 2, checkpoint=tmp_path / "partial.pt", **kw)
    monkeypatch.setattr(C, "save_atomic", real)
    resumed = _tiny()
    result, _ = C.train_top(resumed, cache, 2, checkpoint=tmp_path / "partial.pt", **kw)
    assert result.resumed_from == 4 and result.steps == 6
    for (name, a), b in zip(straight.state_dict().items(), resumed.state_dict().values(), strict=True):
        assert torch.equal(a, b), name


def test_learning_rate_warms_up_then_decays():
    assert [C.lr_factor(s, 2, 6) for s in range(6)] == [0.5, 1.0, 1.0, 0.75, 0.5, 0.25]
    assert C.lr_factor(5, 0, 6) == 1.0
    assert [C.lr_factor(s, 2, 6, annealed=True) for s in range(6)] == [0.5, 1.0, 1.0, 1.0, 1.0, 1.0]


# ----------------------------------------------------------------------------- training to a stop


def _stop(model, tmp_path, rule: AnnealRule, round_steps: int = 2) -> C.StopRule:
    held = C.build_state_cache(model, _inputs(4, seed=9), 2, 1, 5, SPECIAL, MASK, VOCAB, tmp_path / "stop", batch_size=4, progress=False)
    return C.StopRule(held, rule, round_steps)


def test_cached_loss_is_the_mean_cross_entropy_over_the_masked_tokens(tmp_path):
    model = _tiny()
    cache = _cache(model, tmp_path, versions=1, n=5)
    labels = torch.from_numpy(np.array(cache.labels[0]))
    hidden = C.top_states(model, torch.from_numpy(np.array(cache.states[0])), 2)
    keep = labels != LOSS_IGNORE
    with torch.no_grad():
        expected = torch.nn.functional.cross_entropy(model.cls(hidden[keep]), labels[keep])
    assert C.cached_loss(model, cache, 2, batch_size=2) == pytest.approx(float(expected), rel=1e-5)


def _memorising_run(tmp_path, **kw):
    """A run whose stopping text is its training text: the held-out loss falls, so it learns,
    then (lr tiny after decays) stalls and the rule stops it."""
    model = _tiny()
    cache = _cache(model, tmp_path, versions=1, n=4)
    rule = AnnealRule(factor=10.0, tolerance=0.01, decays=1, min_rounds=1, cap=40, patience=1)
    stop = C.StopRule(cache, rule, 2)
    return model, C.train_top(model, cache, 2, steps=80, batch_size=2, lr=3e-3, warmup=0, clip=1.0, seed=0, progress=False, stop=stop, **kw)


def test_training_to_a_stop_ends_by_the_rule_with_the_best_weights_kept(tmp_path):
    model, (result, previous) = _memorising_run(tmp_path)
    assert result.converged and result.anneal is not None and len(result.anneal.decayed_at) == 1
    assert result.steps < 80 and result.steps % 2 == 0  # stopped by the rule before the cap, at a check
    steps, losses, scales = zip(*result.heldout, strict=True)
    assert steps[0] == 0 and list(steps[1:]) == list(range(2, result.steps + 1, 2))
    assert min(losses[1:]) < losses[0]  # it learned
    best = int(np.argmin(losses))
    assert result.best_step == steps[best]
    assert scales[-1] == pytest.approx(0.1)  # one decay by 10
    # the kept weights are the best check's: the held-out loss of the returned model is the minimum
    assert C.cached_loss(model, C.open_state_cache(tmp_path / "states"), 2) == pytest.approx(losses[best], rel=1e-5)
    assert previous is not None and result.previous_step is not None and result.previous_step <= result.best_step
    assert set(previous) <= {n for n, p in model.named_parameters() if ".layer.2." in n or n.startswith("cls.")}


def test_a_run_that_never_beats_the_model_before_training_did_not_learn(tmp_path):
    model = _tiny()
    cache = _cache(model, tmp_path, versions=1, n=4)
    rule = AnnealRule(factor=10.0, tolerance=0.01, decays=1, min_rounds=0, cap=3, patience=1)
    stop = _stop(model, tmp_path, rule)
    result, previous = C.train_top(model, cache, 2, steps=6, batch_size=2, lr=0.0, warmup=0, clip=1.0, seed=0, progress=False, stop=stop)
    assert result.anneal is not None and result.anneal.stop == "did not learn" and not result.converged
    assert previous is None and result.anneal.decayed_at == ()


def test_the_cap_must_match_the_steps(tmp_path):
    model = _tiny()
    cache = _cache(model, tmp_path, versions=1, n=4)
    stop = _stop(model, tmp_path, AnnealRule(factor=10.0, tolerance=0.01, decays=1, min_rounds=0, cap=3))
    with pytest.raises(ValueError, match="must equal steps"):
        C.train_top(model, cache, 2, steps=7, batch_size=2, lr=1e-3, warmup=0, clip=0, seed=0, progress=False, stop=stop)


def test_an_interrupted_run_to_a_stop_resumes_to_the_same_end(tmp_path, monkeypatch):
    straight, (r1, p1) = _memorising_run(tmp_path / "a")
    real = C.save_atomic
    saves = {"n": 0}

    def save_then_die(path, **obj):
        real(path, **obj)
        saves["n"] += 1
        if saves["n"] == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(C, "save_atomic", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        _memorising_run(tmp_path / "b", checkpoint=tmp_path / "partial.pt")
    monkeypatch.setattr(C, "save_atomic", real)
    resumed, (r2, p2) = _memorising_run(tmp_path / "b", checkpoint=tmp_path / "partial.pt")
    assert r2.resumed_from == 6 and r2.steps == r1.steps and r2.heldout == r1.heldout and r2.anneal == r1.anneal
    for (name, a), b in zip(straight.state_dict().items(), resumed.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert p1 is not None and p2 is not None and all(torch.equal(p1[k], p2[k]) for k in p1)


def test_first_trained_layer_is_checked():
    model = _tiny()
    assert C.first_trained(model, 1) == 2 and C.first_trained(model, 3) == 0
    with pytest.raises(ValueError, match="train_layers must be in 1..3"):
        C.first_trained(model, 4)


class _Tokenizer:
    all_special_ids, mask_token_id = list(SPECIAL), MASK

    def __len__(self) -> int:
        return VOCAB


@pytest.mark.parametrize("recipe", ["staged", "stop", "full"])
def test_an_arm_job_trains_with_either_recipe_and_stores_its_held_out_score(tmp_path, monkeypatch, recipe):
    import prismlib.prism.mlm_training

    monkeypatch.setattr(prismlib.prism.mlm_training, "load_mlm_model", lambda name, seed, device="cpu": (_Tokenizer(), _tiny(seed).train()))
    stop = dict(stop_articles=1, round_steps=1, min_rounds=0, decays=1) if recipe == "stop" else dict(stop_articles=0)
    S = get_profile("smoke").prism.updated(
        recipe="full" if recipe == "full" else "staged",
        attention_dropout=None if recipe == "full" else 0.0,
        steps=2,
        batch_size=2,
        train_layers=1,
        head_epochs=1,
        head_batch=8,
        eval_batch=2,
        checkpoint_every=1,
        **stop,
    )
    data = continued.Section4Data(_inputs(6), _inputs(3, seed=1))
    if recipe != "full":
        data.states = {0: str(_cache(_tiny(0), tmp_path, start=2, versions=1).folder)}
    if recipe == "stop":
        data.stop = _inputs(4, seed=9)
        data.stop_states = str(_stop(_tiny(0), tmp_path, AnnealRule(2.0, 0.01, 1, 0, 2)).heldout.folder)
    job = continued.ArmJob("prism", "tiny", "test", 0, S, data.digest())
    jobs.run_job(job, tmp_path / "cache", "cpu", False, data)
    folder = jobs.job_dir(job, tmp_path / "cache")
    assert sorted(p.name for p in folder.iterdir()) == ["done.pt", "done.pt.sha256", "spec.json"]  # no lock or checkpoint left
    done = torch.load(folder / "done.pt", weights_only=False)
    assert done["result"].steps == 2
    assert (done["result"].heldout is not None) == (recipe == "stop") and (done["result"].anneal is not None) == (recipe == "stop")
    sums, counts = done["record"]["heldout_final"]
    assert sums.shape == counts.shape == (3,) and (counts > 0).all() and (sums < 0).all()
    if recipe == "stop" and "previous" in done:  # the earlier checkpoint is scored like the final one
        assert done["record"]["heldout_previous"][0].shape == (3,)
    assert ("heldout_head" in done["record"]) == (recipe != "full")


def test_each_seeds_arm_job_reads_its_own_seeds_maskings(tmp_path, monkeypatch):
    """Training seeds: seed s's job trains on seed s's cached maskings (its own masks), and one
    whose maskings were not built says so rather than reading another seed's."""
    import prismlib.prism.mlm_training

    monkeypatch.setattr(prismlib.prism.mlm_training, "load_mlm_model", lambda name, seed, device="cpu": (_Tokenizer(), _tiny(seed).train()))
    opened = []
    monkeypatch.setattr(continued, "open_state_cache", lambda folder: opened.append(folder) or C.open_state_cache(folder))
    S = get_profile("smoke").prism.updated(
        steps=2, batch_size=2, train_layers=1, head_epochs=1, head_batch=8, eval_batch=2, checkpoint_every=1, stop_articles=0
    )
    caches = {
        s: C.build_state_cache(_tiny(0), _inputs(6), 2, 1, s, SPECIAL, MASK, VOCAB, tmp_path / f"states-{s}", batch_size=4, progress=False)
        for s in (0, 1)
    }
    assert not np.array_equal(caches[0].labels, caches[1].labels)  # each seed masks other tokens
    data = continued.Section4Data(_inputs(6), _inputs(3, seed=1), states={0: str(caches[0].folder)})
    job = continued.ArmJob("prism", "tiny", "test", 1, S, data.digest())
    assert job.key != continued.ArmJob("prism", "tiny", "test", 0, S, data.digest()).key
    with pytest.raises(RuntimeError, match=r"no frozen-state cache of training seed 1 \(built: \[0\]\)"):
        job.train(tmp_path / "job", torch.device("cpu"), False, data)
    data.states[1] = str(caches[1].folder)
    opened.clear()
    jobs.run_job(job, tmp_path / "cache", "cpu", False, data)
    assert opened == [str(caches[1].folder)]


def test_section4_data_caches_each_training_seeds_maskings_and_keeps_the_first_seeds_cache(tmp_path, monkeypatch):
    """One frozen-state cache per training seed, each of its own masks; the profile's seed's
    folder is the one section4_data built before seeds existed (its digest hashed the profile's
    seed), so seed 0's arm jobs read the cache they read before."""
    import hashlib
    from dataclasses import replace
    from types import SimpleNamespace

    import prismlib.prism.mlm_training

    monkeypatch.setattr(prismlib.prism.mlm_training, "load_mlm_model", lambda name, seed, device="cpu": (_Tokenizer(), _tiny(0).train()))
    monkeypatch.setattr(continued, "cache_dir", lambda: tmp_path)
    S = get_profile("smoke").prism.updated(train_layers=1, train_inputs=None, stop_articles=0, mask_versions=1)
    P = replace(get_profile("smoke"), prism=S)
    corpus = SimpleNamespace(train=_inputs(6), evaluation=_inputs(4, seed=1), eval_article=np.arange(4))
    data = continued.section4_data(P, corpus, _Tokenizer(), progress=False)  # type: ignore[arg-type]
    assert data.states is not None and sorted(data.states) == [0, 1] == sorted(S.seeds)
    before = hashlib.sha256(repr((P.encoder, P.seed, 2, S.mask_versions)).encode())
    before.update(_inputs(6).numpy().tobytes())
    assert data.states_of(P.seed) == str(tmp_path / "mlm" / f"states-{P.encoder}-{before.hexdigest()[:16]}")
    caches = {s: C.open_state_cache(data.states_of(s)) for s in (0, 1)}
    assert not np.array_equal(caches[0].labels, caches[1].labels)  # seed 1 has its own masks
    assert np.array_equal(caches[1].labels[0], C.mask_version(_inputs(6), 0, 1, SPECIAL, MASK, VOCAB)[1].numpy())
    assert sorted(continued.section4_data(P, corpus, _Tokenizer(), progress=False, seeds=(1,)).states) == [1]  # type: ignore[arg-type, union-attr]
