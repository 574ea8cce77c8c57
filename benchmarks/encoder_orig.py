"""Measure: does the BERT pretrained here probe as well as MiniLM? (issue 76, item 5)

    python benchmarks/encoder_orig.py                 # cpu: MiniLM against the 4x256 BERT
    python benchmarks/encoder_orig.py --profile smoke --other minilm   # a check: the same encoder twice

Section 4 (notebooks 03-04) runs on the small BERT pretrained here; notebook 02's rows other
than the masked-LM ones and notebook 09 keep all-MiniLM-L6-v2 unless the new encoder probes
as well. For part of speech, dialog acts and topic at notebook 02's sizes (the profile's
windows, positions and probe recipe), this probes the ORIG features of the last layer of each
encoder (the profile's ``encoder`` and ``--other``, by default the profile's section-4 encoder,
:func:`prismlib.pretrain.section4_encoder`) with the profile's probe runs, and scores them on
the **validation** split only (a choice is never made on test): each encoder's accuracy with
its interval over validation units, and other minus MiniLM with the paired bootstrap over the
same units of the predictions pooled over the probe runs (:class:`prismlib.prism.seeds.SeedComparison`).

The rule, stated before the run (docs/benchmarks.md, "Which encoder probes"): notebooks 02
(its rows other than the masked-LM ones) and 09 move to the pretrained BERT only if on every
one of the three tasks the 95% interval of pretrained minus MiniLM lies above -2 points
(non-inferior at notebook 03's ``NO_HARM`` margin); else they keep MiniLM, with these
numbers as the reason.
"""

from __future__ import annotations

import argparse

TASKS = ("pos", "swda", "topic")
MARGIN = 2.0
"""Points: the other encoder probes as well when other - MiniLM's interval lies above -MARGIN."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--other", default=None, help="the encoder to compare (default: the profile's section-4 encoder)")
    args = parser.parse_args()

    from validation_probe import orig_on_validation

    from prismlib.pretrain import section4_encoder
    from prismlib.probing import build_task, encoder_name, load_encoder
    from prismlib.profiles import get_profile

    P = get_profile(args.profile)
    Q = P.probe
    other = args.other or section4_encoder(P).profile.encoder
    names = {"base": P.encoder, "other": other}
    encoders = {k: load_encoder(v, device="cpu") for k, v in names.items()}
    if encoders["base"].tokenizer.get_vocab() != encoders["other"].tokenizer.get_vocab():
        raise SystemExit(f"{other} and {P.encoder} tokenize differently: their windows would not be the same rows")
    print(f"profile {P.name}: {encoder_name(P.encoder)} ({P.encoder}) against {encoder_name(other)} ({other}); validation only")
    verdicts = {}
    for name in TASKS:
        size = Q.sizes[name]
        task = build_task(name, encoders["base"].tokenizer, size.windows(), profile_name=P.name, seed=P.seed, window=P.window,
                          da_labels=Q.da_labels)  # fmt: skip
        v = orig_on_validation(encoders, task, P, size.positions, specials=Q.specials)
        compare = v.compare
        diff = compare.diff("other", "base")
        verdicts[name] = diff.low > -MARGIN
        print(
            f"\n{name}: {v.units} validation units, {v.positions} positions; "
            f"encoding {v.encode_seconds / 60:.1f} min, probes {v.probe_seconds / 60:.1f} min"
        )
        acc = {k: compare.accuracy(k) for k in ("majority", "base", "other")}
        shown = {k: f"{a.effect:.1f}% [{a.low:.1f}, {a.high:.1f}]" for k, a in acc.items()}
        print(f"  majority class {acc['majority'].effect:.1f}%; {P.encoder} {shown['base']}; {other} {shown['other']}")
        print(f"  other - base: {diff} points; above -{MARGIN:g}: {'yes' if verdicts[name] else 'no'}")
    move = all(verdicts.values())
    print(f"\nrule (docs/benchmarks.md, 'Which encoder probes'): {'move 02 and 09 to' if move else 'keep'} "
          f"{encoder_name(other) if move else encoder_name(P.encoder)}")  # fmt: skip


if __name__ == "__main__":
    main()
