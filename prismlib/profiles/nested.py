"""Settings that group some of their fields in settings of their own: :class:`Nested`, the
base of every settings class that holds a recipe, and of every recipe that holds an anneal
schedule (:mod:`prismlib.profiles.schema`)."""

from __future__ import annotations

from dataclasses import Field, asdict, fields, is_dataclass, replace
from typing import Any, ClassVar, Self


class Nested:
    """Settings that group some of their fields in settings of their own (the recipe of
    :class:`~prismlib.profiles.LSTMSettings`, the anneal ``schedule`` of a recipe): a grouped field reads through
    (``settings.decays`` is ``settings.recipe.schedule.decays``), :meth:`updated` changes fields
    at any depth by name, and :meth:`flat` gives every field at one level. A name means one
    field: no two levels of one settings object share a name (:meth:`flat` refuses it).
    """

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]  # every subclass is a dataclass

    def __getattr__(self, name: str) -> Any:
        """A field of a group (``settings.bptt``); only called for names the settings lack."""
        if not name.startswith("__"):  # not a protocol's probe (pickle, copy)
            for group in vars(self).values():  # empty while unpickling: no recursion
                if is_dataclass(group):
                    try:
                        return getattr(group, name)
                    except AttributeError:
                        pass
        raise AttributeError(f"{type(self).__name__} has no setting {name!r}")

    def setting_names(self) -> set[str]:
        """Every name :meth:`updated` takes: the fields at every depth, the groups' own names included."""
        names: set[str] = set()
        for f in fields(self):
            group = getattr(self, f.name)
            names.add(f.name)
            if isinstance(group, Nested):
                names |= group.setting_names()
            elif is_dataclass(group):
                names |= {g.name for g in fields(group)}
        return names

    def updated(self, **changes: Any) -> Self:
        """These settings with ``changes``, each to a field of any depth by its name
        (``settings.updated(lr=1.0, decays=2, seeds=(0,))``); a group changes whole by its own
        name (``schedule=AnnealSettings(...)``), not both ways at once. Every level's checks run."""
        own = {f.name for f in fields(self)}
        direct = {k: v for k, v in changes.items() if k in own}
        rest = {k: v for k, v in changes.items() if k not in own}
        for f in fields(self):
            group = getattr(self, f.name)
            if not isinstance(group, Nested) and not (is_dataclass(group) and not isinstance(group, type)):
                continue
            names = group.setting_names() if isinstance(group, Nested) else {g.name for g in fields(group)}
            inner = {k: rest.pop(k) for k in list(rest) if k in names}
            if inner and f.name in direct:
                raise TypeError(f"change {f.name} whole or some of its settings ({', '.join(sorted(inner))}), not both")
            if inner:
                direct[f.name] = group.updated(**inner) if isinstance(group, Nested) else replace(group, **inner)
        if rest:
            raise TypeError(f"no {type(self).__name__} setting named {', '.join(sorted(rest))}")
        return replace(self, **direct)

    def flat(self) -> dict[str, Any]:
        """Every field by its name at one level, a group's fields (at any depth) in place of the
        group, with :func:`dataclasses.asdict`'s values: what a job's key hashes of a recipe.

        Flat, not nested, so that grouping fields changes no key: the anneal knobs were fields
        of each recipe before :class:`~prismlib.anneal.AnnealSettings` grouped them, under the
        same names, and a recipe's flat fields are what its keys hashed then
        (``tests/fixtures/job_keys.json``). The order of the names does not matter: a key hashes
        them sorted (:func:`prismlib.jobcache.job_key`).

        Raises:
            TypeError: two levels name a field alike (the flat view would lose one).
        """
        whole = asdict(self)
        out: dict[str, Any] = {}
        for f in fields(self):
            group = getattr(self, f.name)
            part = group.flat() if isinstance(group, Nested) else whole[f.name] if is_dataclass(group) else {f.name: whole[f.name]}
            clash = out.keys() & part.keys()
            if clash:
                raise TypeError(f"{type(self).__name__}: {', '.join(sorted(clash))} named at two levels; a name means one field")
            out |= part
        return out
