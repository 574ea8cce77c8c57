"""The pretraining text: PTB-shaped normalisation, the exclusion of evaluated sentences, the
guard that refuses an overlap, the held-out rule and the digest."""

from __future__ import annotations

import pytest
from real_data import need, reads_real_data

from prismlib.pretrain import (
    Document,
    EvaluatedSplit,
    check_disjoint,
    corpus_digest,
    evaluated_keys,
    exclude,
    normalise_sentence,
    sentence_key,
    split_heldout,
    split_sentences,
    synthetic_documents,
)

VOCAB = frozenset(
    "the buy-back represents about of company 's shares based on million outstanding as sept. pierre years old will join board "
    "a nonexecutive director nov. mr. is chairman n't terms were disclosed".split()
)


def test_raw_text_and_mikolov_ptb_normalise_alike():
    raw = "The buy-back represents about 3 % of the company 's shares , based on the 3.7 million shares outstanding as of Sept. 30 ."
    ptb = "the buy-back represents about N N of the company 's shares based on the N million shares outstanding as of sept. N"
    assert normalise_sentence(raw, VOCAB) == normalise_sentence(ptb, VOCAB) == ptb
    # a word outside the vocabulary is <unk>, as Mikolov mapped it; quotes and brackets go
    raw = "`` Pierre Vinken , 61 years old , will join the board -LRB- as a nonexecutive director -RRB- Nov. 29 . ''"
    ptb = "pierre <unk> N years old will join the board as a nonexecutive director nov. N"
    assert normalise_sentence(raw, VOCAB) == normalise_sentence(ptb, VOCAB) == ptb
    # the pretraining text's [UNK] (PTB's <unk>) and raw punctuation glued to words
    assert normalise_sentence("Mr. [UNK] is chairman.", VOCAB) == "mr. <unk> is chairman"
    assert sentence_key("Terms weren't disclosed.", VOCAB) == sentence_key("terms <unk> disclosed", VOCAB)
    assert sentence_key("terms were n't disclosed", VOCAB) != sentence_key("terms were disclosed", VOCAB)


def test_short_sentences_have_no_key_under_a_word_minimum():
    assert sentence_key("thank you .", VOCAB, min_words=3) is None
    assert sentence_key("thank you .", VOCAB) is not None
    assert sentence_key(" , . ", VOCAB) is None


def test_split_sentences_cuts_lines_and_sentence_ends_and_drops_quote_marks():
    text = "> I think so. Do you?\n|  Yes!\n\nthe end"
    assert split_sentences(text) == ["I think so.", "Do you?", "Yes!", "the end"]


TEST_SENTENCE = "the board will join the company as a director of shares in september"


def _splits() -> list[EvaluatedSplit]:
    return [
        EvaluatedSplit("20 Newsgroups test", lambda: [TEST_SENTENCE, "thank you"]),
        EvaluatedSplit("CoNLL-2000 test (WSJ section 20)", lambda: ["Terms were n't disclosed ."], inside="ptb"),
    ]


def _docs(extra: str | None = None, source: str = "newsgroups") -> list[Document]:
    docs = synthetic_documents(5, seed=1)
    if extra is not None:
        d = docs[2]
        docs[2] = Document(source, d.doc_id, (*d.sentences, extra))
    return docs


def test_a_corpus_holding_a_test_sentence_is_refused_naming_the_split():
    keys = evaluated_keys(VOCAB, _splits())
    check_disjoint(_docs(), keys, VOCAB)  # clean: no error
    with pytest.raises(ValueError, match=r"overlaps an evaluated split: 1 sentence\(s\) of 20 Newsgroups test") as err:
        check_disjoint(_docs("The board will join the company, as a director of shares in September!"), keys, VOCAB)
    assert "\n" not in str(err.value) and "CoNLL" not in str(err.value)


def test_short_sentences_count_at_every_length_only_inside_the_source_that_holds_the_split():
    keys = evaluated_keys(VOCAB, _splits())
    check_disjoint(_docs("thank you."), keys, VOCAB)  # short and shared by chance: allowed
    check_disjoint(_docs("terms were n't disclosed", source="newsgroups"), keys, VOCAB)
    with pytest.raises(ValueError, match=r"CoNLL-2000 test \(WSJ section 20\)"):
        check_disjoint(_docs("terms were n't disclosed", source="ptb"), keys, VOCAB)


def test_exclude_drops_exactly_the_evaluated_sentences_and_counts_them():
    keys = evaluated_keys(VOCAB, _splits())
    docs = _docs(TEST_SENTENCE.upper() + ".")
    docs.append(Document("ptb", "ptb-0000", ("terms were n't disclosed",)))
    kept, removed = exclude(docs, keys, VOCAB)
    assert removed == {("newsgroups", "20 Newsgroups test"): 1, ("ptb", "CoNLL-2000 test (WSJ section 20)"): 1}
    assert [d.doc_id for d in kept] == [d.doc_id for d in docs[:-1]]  # the emptied document is dropped
    assert kept[2].sentences == docs[2].sentences[:-1] and kept[0] == docs[0]
    check_disjoint(kept, keys, VOCAB)


def test_the_heldout_slice_is_every_fiftieth_document_of_each_source():
    docs = [Document(src, f"{src}-{i}", ("x",)) for src in ("a", "b") for i in range(120)]
    train, heldout = split_heldout(docs)
    assert [d.doc_id for d in heldout] == ["a-49", "a-99", "b-49", "b-99"]
    assert len(train) + len(heldout) == len(docs) and not {d.doc_id for d in train} & {d.doc_id for d in heldout}


def test_the_corpus_digest_moves_with_the_text_and_the_split():
    docs = synthetic_documents(4, seed=0)
    base = corpus_digest(docs)
    assert base == corpus_digest(synthetic_documents(4, seed=0))
    assert base != corpus_digest(synthetic_documents(4, seed=1))
    assert base != corpus_digest(docs[:3], docs[3:])


@reads_real_data
def test_every_conll2000_test_sentence_is_found_in_ptb_train():
    need("ptb/ptb.train.txt", "nltk_data/corpora/conll2000.zip")
    from prismlib.data import load_conll2000
    from prismlib.pretrain import ptb_documents, ptb_vocabulary, sentence_keys

    vocab = ptb_vocabulary()
    test = sentence_keys((" ".join(w for w, _ in s) for s in load_conll2000("test").sentences), vocab)
    ptb = sentence_keys((s for d in ptb_documents() for s in d.sentences), vocab)
    assert len(test) > 1900 and test <= ptb  # all 2,012 sentences (2,004 distinct) sit inside PTB train
