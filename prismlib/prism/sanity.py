"""The MLM sanity gate of section 4: does each trained arm's MLM head beat a unigram model on held-out text?

:func:`mlm_sanity` scores the held-out masked tokens every arm job stored (after the head
warm-up and at the end, :mod:`prismlib.prism.arms`) against a unigram model of the training
text, with intervals over articles; :class:`MLMSanity` holds the table and the gates every
claim of section 4 rests on (the head beats the unigram model, training improved on the
encoder before it, training converged) and the held-out curves of runs trained to a stop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from prismlib.claims import Gate
from prismlib.prism.arms import Section4Data, TrainedMLM
from prismlib.prism.mlm_training import TrainResult
from prismlib.prism.span_analysis import heldout_mask
from prismlib.stats import Interval


@dataclass
class MLMSanity:
    """The MLM sanity check of section 4's trained arms (:func:`mlm_sanity`).

    Every attribute is keyed by model: an arm and its training seed (``"prism#1"``,
    :func:`prismlib.prism.seeded`), as :func:`prismlib.prism.section4_models` names them.

    Attributes:
        table: one row per model and stage (columns arm: the model, stage, steps, heldout_loss,
            unigram_loss, gain, ci_low, ci_high, articles).
        intervals: per model, model minus unigram log p (nats per masked held-out token)
            at the final stage, with its interval over articles.
        improved: per model (staged recipe), final minus head-warm-up log p on the same
            held-out tokens: what training the top layers added over the encoder before it.
        results: per model, its training record (why it stopped, its held-out curve).
    """

    table: pd.DataFrame
    intervals: dict[str, Interval]
    improved: dict[str, Interval] = field(default_factory=dict)
    results: dict[str, TrainResult] = field(default_factory=dict)

    def curves(self) -> pd.DataFrame:
        """The stopping text's held-out loss at every check of every arm trained to a stop
        (columns arm, step, heldout_loss, lr_scale, kept: whether it is the kept checkpoint,
        earlier: whether it is the earlier checkpoint of the stability gates)."""
        rows = [
            {
                "arm": arm,
                "step": step,
                "heldout_loss": loss,
                "lr_scale": scale,
                "kept": step == r.best_step,
                "earlier": step == r.previous_step,
            }
            for arm, r in self.results.items()
            for step, loss, scale in (r.heldout or [])
        ]
        return pd.DataFrame(rows, columns=["arm", "step", "heldout_loss", "lr_scale", "kept", "earlier"])

    def converged_gate(self, arm: str, model: str) -> Gate:
        """Gate: ``arm`` trained until its schedule's rule stopped it (not at its cap, and
        not a fixed budget)."""
        r = self.results.get(arm)
        name = f"converged: {model} trained until its rule stopped it"
        if r is None or r.anneal is None:
            return Gate(name, False, "not converged: a fixed budget of steps (this profile does not train to a stop)")
        best = "" if r.best_step is None else f", best held-out check at step {r.best_step} (kept)"
        detail = f"stopped: {r.anneal.stop} after {r.steps} steps, decays at rounds {list(r.anneal.decayed_at)}{best}"
        return Gate(name, r.converged, detail if r.converged else f"not converged: {detail}")

    def improved_gate(self, arm: str, model: str) -> Gate:
        """Gate: ``arm``'s held-out MLM loss is below that of the encoder before training
        (after the head warm-up, on the same tokens), its interval above 0."""
        iv = self.improved.get(arm)
        name = f"{model}'s held-out MLM loss is below the encoder's before training"
        if iv is None:
            return Gate(name, False, "no held-out score of the encoder before training (full recipe)")
        return Gate.from_interval(name, iv, detail=f"trained - before log p {iv} nats per masked held-out token")

    def gate(self, arm: str, model: str) -> Gate:
        """Gate: ``arm``'s MLM head (called ``model`` in the row) beats the unigram model
        on held-out text, its interval above 0."""
        row = self.table[(self.table["arm"] == arm) & (self.table["stage"] == "final")].iloc[0]
        iv = self.intervals[arm]
        return Gate.from_interval(
            f"{model}'s MLM head beats a unigram model on held-out text",
            iv,
            detail=f"held-out loss {row.heldout_loss:.3f} vs unigram {row.unigram_loss:.3f} nats/token; model - unigram log p {iv}",
        )


def mlm_sanity(
    models: dict[str, TrainedMLM],
    data: Section4Data,
    articles: np.ndarray,
    unigram: np.ndarray,
    mask_id: int,
    special_ids,
    seed: int,
    n_boot: int,
) -> MLMSanity:
    """Held-out masked-token loss of every trained arm against a unigram model of the training text.

    The held-out score of :func:`prismlib.prism.heldout_logprobs` (15% of the tokens of
    every held-out input masked, seeded by the model's training seed ``m.seed``) was stored by
    each job after the head warm-up (staged recipe) and at the end; ``unigram`` (``(vocab,)``
    log-probabilities, :func:`prismlib.prism.unigram_logprobs` of the training inputs) scores
    the same tokens. The interval of model minus unigram log p (nats per masked token)
    resamples articles (``seed``: of the bootstrap).

    Returns:
        :class:`MLMSanity`: the table of every arm and stage, and the final intervals
        behind each arm's gate.
    """
    from prismlib.prism.span_analysis import article_mean

    tokens = unigram[data.heldout.numpy()]
    rows, gates, improved = [], {}, {}
    for arm, m in models.items():
        uni = (tokens * heldout_mask(data.heldout, mask_id, special_ids, m.seed)[1].numpy()).sum(1)  # the tokens m's job scored
        if "heldout_head" in m.record and "heldout_final" in m.record:
            final, counts = (np.asarray(x, dtype=np.float64) for x in m.record["heldout_final"])
            before = np.asarray(m.record["heldout_head"][0], dtype=np.float64)
            improved[arm] = article_mean(final, articles, before, weights=counts, n_boot=n_boot, seed=seed)
        for stage, key, steps in (("head warm-up", "heldout_head", 0), ("final", "heldout_final", m.result.steps if m.result else 0)):
            if key not in m.record:
                continue
            sums, counts = (np.asarray(x, dtype=np.float64) for x in m.record[key])
            iv = article_mean(sums, articles, uni, weights=counts, n_boot=n_boot, seed=seed)
            rows.append(
                {
                    "arm": arm,
                    "stage": stage,
                    "steps": steps,
                    "heldout_loss": -sums.sum() / counts.sum(),
                    "unigram_loss": -uni.sum() / counts.sum(),
                    "gain": iv.effect,
                    "ci_low": iv.low,
                    "ci_high": iv.high,
                    "articles": iv.units,
                }
            )
            if stage == "final":
                gates[arm] = iv
    results = {arm: m.result for arm, m in models.items() if m.result is not None}
    return MLMSanity(pd.DataFrame(rows), gates, improved, results)
