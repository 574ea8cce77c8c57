"""prismlib: a small library behind the notebooks of the prism-companion project.

One concept per module: :mod:`prismlib.spectral` (DCT and band filters),
:mod:`prismlib.data` (datasets), :mod:`prismlib.probing.features` (encoder features),
:mod:`prismlib.profiles` (smoke / cpu / paper settings), :mod:`prismlib.plots`
(figure theme and saving), :mod:`prismlib.runs.notebooks` (headless notebook runs).
"""

__version__ = "0.1.0"
