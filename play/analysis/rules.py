"""KataGo's rules vocabulary (`kata-get-rules`, `kata-set-rules`, the analysis query's `rules`)
mapped onto the one rule set fastgo plays: area scoring (Tromp-Taylor), positional superko,
suicide illegal, no handicap compensation, no button.

`parse_rules(value)` reads a KataGo shorthand ('japanese', 'tromp-taylor', ...) or a JSON
object of the fields below; `differences(rules)` names the fields where the asked rules differ
from ours, which the analysis engine reports in a warning object and the GTP engine accepts
(it plays ours either way).
"""
from __future__ import annotations

import json

from fastgo import bounded_json

# The fields of a KataGo rules object and the values each may take.
FIELDS = {
    "ko": ("SIMPLE", "POSITIONAL", "SITUATIONAL"),
    "scoring": ("AREA", "TERRITORY"),
    "tax": ("NONE", "SEKI", "ALL"),
    "suicide": (True, False),
    "hasButton": (True, False),
    "whiteHandicapBonus": ("0", "N-1", "N"),
    "friendlyPassOk": (True, False),
}

FASTGO_RULES = {"friendlyPassOk": False, "hasButton": False, "ko": "POSITIONAL",
                "scoring": "AREA", "suicide": False, "tax": "NONE", "whiteHandicapBonus": "0"}


def _rules(ko, scoring, tax, suicide, button, bonus, friendly):
    return {"friendlyPassOk": friendly, "hasButton": button, "ko": ko, "scoring": scoring,
            "suicide": suicide, "tax": tax, "whiteHandicapBonus": bonus}


# KataGo's shorthands (docs/GTP_Extensions.md, kata-set-rules).
SHORTHANDS = {
    "tromp-taylor": _rules("POSITIONAL", "AREA", "NONE", True, False, "0", False),
    "chinese": _rules("SIMPLE", "AREA", "NONE", False, False, "N", True),
    "chinese-ogs": _rules("POSITIONAL", "AREA", "NONE", False, False, "N", True),
    "chinese-kgs": _rules("POSITIONAL", "AREA", "NONE", False, False, "N", True),
    "japanese": _rules("SIMPLE", "TERRITORY", "SEKI", False, False, "0", True),
    "korean": _rules("SIMPLE", "TERRITORY", "SEKI", False, False, "0", True),
    "stone-scoring": _rules("SIMPLE", "AREA", "ALL", False, False, "0", True),
    "aga": _rules("SITUATIONAL", "AREA", "NONE", False, False, "N-1", True),
    "bga": _rules("SITUATIONAL", "AREA", "NONE", False, False, "N-1", True),
    "new-zealand": _rules("SITUATIONAL", "AREA", "NONE", True, False, "0", True),
    "aga-button": _rules("SITUATIONAL", "AREA", "NONE", False, True, "N-1", True),
    "fastgo": dict(FASTGO_RULES),
}
ALIASES = {"tt": "tromp-taylor", "trompTaylor": "tromp-taylor", "cn": "chinese", "jp": "japanese",
           "ko": "korean", "nz": "new-zealand", "newzealand": "new-zealand",
           "stone_scoring": "stone-scoring"}

MAX_RULES_CHARS = 1000


class RulesError(ValueError):
    """Rules text or object that is not KataGo's vocabulary."""


def parse_rules(value):
    """A KataGo shorthand (any case, '_' for '-'), a JSON object text, or a dict -> a full rules
    dict (missing fields take ours). RulesError for anything else."""
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_RULES_CHARS:
            raise RulesError("rules text is too long")
        if text.startswith("{"):
            try:
                value = bounded_json.loads(text, max_size=MAX_RULES_CHARS)
            except ValueError as err:
                raise RulesError(f"Could not parse rules ({err}): {text[:200]}") from None
        else:
            key = ALIASES.get(text, text).lower().replace("_", "-")
            key = ALIASES.get(key, key)
            if key not in SHORTHANDS:
                raise RulesError(f"Could not parse rules: {text[:200]}")
            return dict(SHORTHANDS[key])
    if not isinstance(value, dict):
        raise RulesError("Must specify rules string, such as \"chinese\" or \"tromp-taylor\", "
                         "or a JSON object with detailed rules parameters.")
    rules = dict(FASTGO_RULES)
    for key, item in value.items():
        if key not in FIELDS:
            raise RulesError(f"Could not parse rules: unknown field {str(key)[:60]!r}")
        allowed = FIELDS[key]
        if isinstance(item, str) and not isinstance(allowed[0], bool):
            item = item.upper()
        if isinstance(allowed[0], bool) and not isinstance(item, bool):
            raise RulesError(f"Could not parse rules: {key} must be true or false")
        if item not in allowed:
            raise RulesError(f"Could not parse rules: {key} must be one of "
                             + ", ".join(json.dumps(a) for a in allowed))
        rules[key] = item
    return rules


def differences(rules):
    """The fields (sorted) where `rules` differ from what fastgo plays, friendlyPassOk aside
    (it changes when a player may pass, not the score)."""
    return sorted(k for k in FIELDS if k != "friendlyPassOk" and rules.get(k) != FASTGO_RULES[k])


def rules_json(rules):
    """KataGo's compact JSON text of a rules dict (keys sorted, as kata-get-rules prints)."""
    return json.dumps(rules, sort_keys=True, separators=(",", ":"))


def substitution_warning(rules):
    """The warning text for rules fastgo plays differently, or None where they match ours."""
    fields = differences(rules)
    if not fields:
        return None
    return (f"Rules {rules_json(rules)} not supported by fastgo ({', '.join(fields)} differ), "
            f"using {rules_json(FASTGO_RULES)} instead")
