"""Switchboard Dialog Act corpus (SWDA), original WS97 ``.utt`` release.

Read straight out of ``swb1_dialogact_annot.tar.gz`` (no extraction): 1,155
conversations ``swb1_dialogact_annot/swNNutt/sw_NNNN_CCCC.utt``, conversation id
``swCCCC``. A file is a header, a line of ``=``, then one utterance a line::

    sd^e          A.2 utt2: we haven't had any since, uh, oh, just before Christmas  /

(act tag, speaker ``A``/``B`` sometimes prefixed by ``@``, turn number, utterance
number within the turn, text with the transcription's disfluency markup).

Dialog acts: :func:`damsl_tag` maps a raw tag to the standard 42-class SWBD-DAMSL
clustering (Jurafsky, Shriberg & Biasca's coders' manual, as in Potts' ``swda``);
the ``+`` tag marks the continuation of a speaker's utterance interrupted by the
other speaker, and takes the act of the SAME speaker's previous utterance. On the
whole corpus (223,606 utterances) every utterance lands in one of the 42 classes.
A ``+`` with no earlier utterance of its speaker (none occur in the corpus) would
keep the damsl tag ``+``, outside :data:`DAMSL_TAGS`; a raw tag outside the manual's
scheme would keep its cleaned form, also outside: nothing is dropped silently.

Split: WS97 lists ``swda_splits/ws97-{train,val,test}-convs.list`` (1,115 / 21 /
19 conversations); the validation list is derived by ``fetch`` as the conversations
of the tar in neither published list (:func:`derive_validation_ids`).
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .datadir import ChecksumError, locate

DATASET = "swda"
TAR_RELPATH = "swb1_dialogact_annot.tar.gz"
CONVERSATIONS = 1155
"""Conversations (``.utt`` files) in the canonical tar."""
SPLITS = ("train", "val", "test")
CONTINUATION = "+"

DAMSL_TAGS: tuple[str, ...] = tuple(
    sorted(
        [
            "%",
            "^2",
            "^g",
            "^h",
            "^q",
            "aa",
            "aap_am",
            "ad",
            "ar",
            "arp_nd",
            "b",
            "b^m",
            "ba",
            "bd",
            "bf",
            "bh",
            "bk",
            "br",
            "fa",
            "fc",
            'fo_o_fw_"_by_bc',
            "fp",
            "ft",
            "h",
            "na",
            "ng",
            "nn",
            "no",
            "ny",
            "oo_co_cc",
            "qh",
            "qo",
            "qrr",
            "qw",
            "qw^d",
            "qy",
            "qy^d",
            "sd",
            "sv",
            "t1",
            "t3",
            "x",
        ]
    )
)
"""The 42 SWBD-DAMSL classes, sorted."""

_KEEP = frozenset({"qy^d", "qw^d", "b^m"})
_SPECIAL = {"nn^e": "ng", "ny^e": "na"}
_MERGE = {
    "qr": "qy",
    "fe": "ba",
    "oo": "oo_co_cc", "co": "oo_co_cc", "cc": "oo_co_cc",
    "fx": "sv",
    "aap": "aap_am", "am": "aap_am",
    "arp": "arp_nd", "nd": "arp_nd",
    "fo": 'fo_o_fw_"_by_bc', "o": 'fo_o_fw_"_by_bc', "fw": 'fo_o_fw_"_by_bc',
    '"': 'fo_o_fw_"_by_bc', "by": 'fo_o_fw_"_by_bc', "bc": 'fo_o_fw_"_by_bc',
}  # fmt: skip

_LINE = re.compile(r"^(?P<tag>\S+)\s+@*(?P<speaker>[AB])\.(?P<turn>\d+)\s+utt(?P<index>\d+):\s*(?P<text>.*)$")
_MEMBER = re.compile(r"(?:^|/)sw_\d+_(\d+)\.utt$")


def damsl_tag(act_tag: str) -> str:
    """The 42-class SWBD-DAMSL cluster of a raw act tag (``+`` is returned as is).

    Multiple tags (``"sd;qy^d"``, ``"bf,nn,o@"``) keep the first. ``qy^d``, ``qw^d``
    and ``b^m`` are kept; ``nn^e`` -> ``ng``, ``ny^e`` -> ``na``; otherwise
    everything from the first ``^`` after the first character is dropped,
    ``( ) @ *`` are removed, and the manual's merges apply (``qr`` -> ``qy``,
    ``fe`` -> ``ba``, ``oo/co/cc``, ``fx`` -> ``sv``, ``aap/am``, ``arp/nd``,
    ``fo/o/fw/"/by/bc``).
    """
    tag = re.split(r"\s*[,;]\s*", act_tag.strip())[0]
    if tag in _KEEP:
        return tag
    if tag in _SPECIAL:
        return _SPECIAL[tag]
    tag = re.sub(r"(.)\^.*", r"\1", tag)
    tag = re.sub(r"[()@*]", "", tag)
    return _MERGE.get(tag, tag)


@dataclass(frozen=True)
class Utterance:
    """One utterance (a slash unit) of a conversation.

    Attributes:
        speaker: ``"A"`` or ``"B"``.
        turn: turn number within the conversation (1-based, as in the file).
        index: utterance number within the turn (1-based).
        act_tag: the raw act tag of the file (e.g. ``"sd^e"``, ``"+"``).
        damsl: its 42-class SWBD-DAMSL cluster (``+`` resolved to the speaker's
            previous act).
        text: the transcribed text with its markup, stripped of outer spaces.
    """

    speaker: str
    turn: int
    index: int
    act_tag: str
    damsl: str
    text: str

    @property
    def plain_text(self) -> str:
        """The text without transcription markup (see :func:`plain_text`)."""
        return plain_text(self.text)


@dataclass(frozen=True)
class Conversation:
    """A conversation ``swCCCC`` and its utterances in file order."""

    conv_id: str
    utterances: list[Utterance]


_MARKUP = [
    (re.compile(r"<<[^>]*>>|<[^>]*>"), " "),  # non-speech: <laughter>, <<comment>>
    (re.compile(r"\{[A-Z]\s"), " "),  # disfluency class opener: {F uh, }
    (re.compile(r"(?<!\S)\+(?!\S)|[\[\]{}#/]|\(\(|\)\)"), " "),  # repairs, overlaps, slash units
    (re.compile(r"\s+"), " "),
]


def plain_text(text: str) -> str:
    """Text without SWBD markup: ``{F uh, }`` -> ``uh,``; drops ``[ + ]``, ``#``, ``/``,
    ``((``/``))`` and ``<noises>``; collapses whitespace. Words and ``--`` are kept."""
    for pattern, repl in _MARKUP:
        text = pattern.sub(repl, text)
    return text.strip()


def parse_utt_text(text: str, conv_id: str) -> Conversation:
    """Parse one ``.utt`` file's text.

    Raises:
        ValueError: no ``=`` line after the header, or a non-blank line after it
            that is not an utterance (nothing is skipped silently).
    """
    lines = text.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if len(ln) >= 10 and set(ln.strip()) == {"="})
    except StopIteration:
        raise ValueError(f"{conv_id}: no '=====' line after the header") from None
    utterances: list[Utterance] = []
    previous_act: dict[str, str] = {}
    for lineno, line in enumerate(lines[start + 1 :], start + 2):
        if not line.strip():
            continue
        m = _LINE.match(line.strip())
        if m is None:
            raise ValueError(f"{conv_id}, line {lineno}: not an utterance: {line!r}")
        speaker, act_tag = m["speaker"], m["tag"]
        act = damsl_tag(act_tag)
        if act == CONTINUATION:
            act = previous_act.get(speaker, CONTINUATION)
        previous_act[speaker] = act
        utterances.append(Utterance(speaker, int(m["turn"]), int(m["index"]), act_tag, act, m["text"].strip()))
    return Conversation(conv_id, utterances)


def conversation_members(tar_path: Path) -> dict[str, str]:
    """Conversation id (``"sw3936"``) -> tar member name of its ``.utt`` file."""
    with tarfile.open(tar_path) as tf:
        members = {}
        for name in tf.getnames():
            m = _MEMBER.search(name)
            if m:
                members[f"sw{m.group(1)}"] = name
    return members


def split_list_relpath(split: str) -> str:
    """Data-dir relative path of a WS97 split list: ``swda_splits/ws97-train-convs.list``."""
    return f"swda_splits/ws97-{split}-convs.list"


def read_id_list(path: Path) -> list[str]:
    """Conversation ids of a split list, one a line (blank lines ignored)."""
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


def derive_validation_ids(root: Path) -> list[str]:
    """The WS97 validation conversations: those of the tar in neither published list.

    Args:
        root: a data directory holding the tar and the train / test lists.

    Returns:
        sorted ids (21 for the real corpus).
    """
    in_tar = conversation_members(root / TAR_RELPATH)
    listed = set(read_id_list(root / split_list_relpath("train")))
    listed |= set(read_id_list(root / split_list_relpath("test")))
    unknown = listed - set(in_tar)
    if unknown:
        raise ValueError(f"split lists name conversations not in the tar: {sorted(unknown)[:5]}")
    return sorted(set(in_tar) - listed)


def validation_list(root: Path) -> bytes:
    """The derived validation list's file content: one id a line (see
    :func:`derive_validation_ids`)."""
    return "".join(f"{cid}\n" for cid in derive_validation_ids(root)).encode()


def check_archive(tar_path: Path) -> str:
    """Structural check of the tar: :data:`CONVERSATIONS` ``.utt`` files.

    Returns a one-line summary; raises :class:`ChecksumError` on another count.
    """
    n = len(conversation_members(tar_path))
    if n != CONVERSATIONS:
        raise ChecksumError(f"{tar_path}: expected {CONVERSATIONS:,} conversations (.utt files), got {n}")
    return f"{CONVERSATIONS:,} conversations"


def check_id_list(expected: int) -> Callable[[Path], str]:
    """A structural check of a split list: ``expected`` ids like ``sw2005``, one a line."""

    def check(path: Path) -> str:
        ids = read_id_list(path)
        bad = [i for i in ids if not (i.startswith("sw") and i[2:].isdigit())]
        if len(ids) != expected or bad:
            raise ChecksumError(f"{path}: expected {expected} conversation ids like 'sw2005', got {len(ids)} ({len(bad)} malformed)")
        return f"{expected} conversation ids"

    return check


def load_conversations(conv_ids: Iterable[str] | None = None) -> list[Conversation]:
    """Conversations read from the tar, in the order of ``conv_ids`` (default: all,
    sorted by id).

    Raises:
        KeyError: an id is not in the tar.
    """
    path = locate(TAR_RELPATH, DATASET)
    members = conversation_members(path)
    ids = sorted(members) if conv_ids is None else list(conv_ids)
    missing = [c for c in ids if c not in members]
    if missing:
        raise KeyError(f"conversations not in {path}: {missing[:5]}")
    wanted = {members[c]: c for c in ids}
    texts: dict[str, str] = {}
    with tarfile.open(path) as tf:
        for member in tf:  # one sequential pass over the gzip stream
            if member.name in wanted:
                data = tf.extractfile(member)
                assert data is not None
                texts[wanted[member.name]] = data.read().decode("latin-1")
    return [parse_utt_text(texts[c], c) for c in ids]


def load_swda(split: str) -> list[Conversation]:
    """Conversations of the WS97 ``"train"`` / ``"val"`` / ``"test"`` split, in list order.

    Returns:
        1,115 / 21 / 19 conversations.
    """
    if split not in SPLITS:
        raise ValueError(f"SWDA split must be one of {SPLITS}, got {split!r}")
    return load_conversations(read_id_list(locate(split_list_relpath(split), DATASET)))
