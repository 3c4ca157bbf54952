"""Every refusal code a person can meet on the players' pages has a sentence (api/play/
refusals.py); the rest are named as codes no page can provoke. A new ErrorCode fails this until
it is put in one list or the other."""

from __future__ import annotations

import json

from api.play.refusals import NEVER_SHOWN, SENTENCES, sentences_json
from domain.errors import ErrorCode


def test_every_code_has_a_sentence_or_is_never_shown() -> None:
    missing = [c.value for c in ErrorCode if c not in SENTENCES and c not in NEVER_SHOWN]
    assert missing == []
    assert set(SENTENCES) & NEVER_SHOWN == set()
    assert all(s.strip() and s.endswith(".") for s in SENTENCES.values())


def test_the_map_is_json_that_cannot_close_its_script_element() -> None:
    text = sentences_json()
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {c.value: s for c, s in SENTENCES.items()}
