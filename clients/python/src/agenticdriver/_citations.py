"""Citation check: the ``[source:ID]`` references a model wrote into a run result must name
sources the result lists. It checks identity only, never whether a source supports the text.

Grammar (the same in every client): every occurrence of the literal ``[source:`` opens a
citation, which must continue with an ID and ``]``. ID has the wire's OpaqueKey syntax,
``[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}``. Anything else after ``[source:`` (an empty or longer
ID, a forbidden character, no ``]``) is a malformed citation. Scanned: ``result["text"]``,
then each artifact's ``content`` in order.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping

from .errors import DriverError
from .types import ContextManifest

_OPEN = "[source:"
_ID = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}")


def cited_ids(text: str) -> List[str]:
    """The cited IDs of one text, in order; ``INVALID_CITATION`` on a malformed citation."""
    ids: List[str] = []
    at = text.find(_OPEN)
    while at != -1:
        start = at + len(_OPEN)
        end = text.find("]", start)
        cited = text[start:end] if end != -1 else ""
        if not _ID.fullmatch(cited):
            raise DriverError(
                "INVALID_CITATION",
                f"Malformed citation at offset {at}: [source: must be followed by an id ([a-zA-Z0-9][a-zA-Z0-9._:-]{{0,127}}) and ].",
            )
        ids.append(cited)
        at = text.find(_OPEN, start)
    return ids


def check_citations(result: Mapping[str, Any]) -> List[ContextManifest]:
    """Check every ``[source:ID]`` in the result's text and artifact contents against
    ``result["sources"][*]["id"]``; return the cited source manifests in order of first
    citation. An unknown or malformed citation raises ``DriverError`` ``INVALID_CITATION``."""
    by_id: Dict[str, ContextManifest] = {source["id"]: source for source in result.get("sources", [])}
    cited: Dict[str, ContextManifest] = {}
    texts = [result["text"], *(artifact["content"] for artifact in result.get("artifacts", []))]
    for text in texts:
        for source_id in cited_ids(text):
            source = by_id.get(source_id)
            if source is None:
                raise DriverError("INVALID_CITATION", f"The result cites [source:{source_id}], which is not one of its sources.")
            cited.setdefault(source_id, source)
    return list(cited.values())
