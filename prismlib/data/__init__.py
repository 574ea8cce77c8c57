"""Real datasets: one module each, a data directory, the catalogue (sources,
checksums, licences) and the registry (fetch, verify) on top.

Files live in the data directory (``$PRISMLIB_DATA``, default ``<repo>/data``) in
the canonical layout of their public distributions; ``python -m prismlib data
fetch NAME`` downloads them. A missing file raises :class:`DataNotFoundError`
naming the file, the places searched and that command.

=================  =========================================================
module             loader
=================  =========================================================
``ptb``            :func:`load_ptb`, :func:`ptb_vocab`, :func:`load_ptb_corpus`
``pos``            :func:`load_treebank_sample`, :func:`load_conll2000`,
                   :func:`load_tagged_dir`
``swda``           :func:`load_swda` (42-class SWBD-DAMSL, :data:`DAMSL_TAGS`)
``newsgroups``     :func:`load_newsgroups` (:data:`NEWSGROUPS`)
``wikitext``       :func:`load_wikitext`
=================  =========================================================

Infrastructure: ``datadir`` (:func:`data_dir`, :func:`locate`, the errors) is all
a dataset module imports; ``catalogue`` (:data:`DATASETS`: each dataset's
:class:`DataFile` s, their sources and SHA-256 digests) imports the dataset modules'
checks; ``registry`` (:func:`fetch`, :func:`verify`) imports the catalogue. The ``data``
command line is :mod:`prismlib.runs.data`. ``published`` holds the numbers the papers
and slides print (each with its table, figure or slide), for the notebooks to compare with.
"""

from .catalogue import DATASETS, DataFile, Dataset
from .datadir import ChecksumError, DataNotFoundError, DownloadError, data_dir, locate
from .newsgroups import NEWSGROUPS, NewsgroupsDoc, load_newsgroups
from .pos import TaggedDocument, load_conll2000, load_tagged_dir, load_treebank_sample
from .ptb import PTBCorpus, load_ptb, load_ptb_corpus, ptb_vocab
from .registry import Fetched, FileStatus, fetch, verify
from .swda import DAMSL_TAGS, Conversation, Utterance, damsl_tag, load_swda
from .wikitext import Article, load_wikitext

__all__ = [
    "DAMSL_TAGS",
    "DATASETS",
    "NEWSGROUPS",
    "Article",
    "ChecksumError",
    "Conversation",
    "DataFile",
    "DataNotFoundError",
    "Dataset",
    "DownloadError",
    "Fetched",
    "FileStatus",
    "NewsgroupsDoc",
    "PTBCorpus",
    "TaggedDocument",
    "Utterance",
    "damsl_tag",
    "data_dir",
    "fetch",
    "load_conll2000",
    "load_newsgroups",
    "load_ptb",
    "load_ptb_corpus",
    "load_swda",
    "load_tagged_dir",
    "load_treebank_sample",
    "load_wikitext",
    "locate",
    "ptb_vocab",
    "verify",
]
