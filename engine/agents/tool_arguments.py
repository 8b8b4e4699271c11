"""Checking a tool call's arguments: numbers and booleans sent as text
read as what the schema asks for, and a schema violation put in words an
agent can act on. :class:`~.tools.MemoryTools` validates with jsonschema
and raises the :class:`ToolError` defined here.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Mapping

from ..errors import MemextError

if TYPE_CHECKING:
    import jsonschema


class ToolError(MemextError):
    """A tool call failed; the message is meant for the agent that made it."""


def typed_text(tool: str, key: str, value: str, prop: Mapping[str, Any]) -> Any:
    """``value`` as the number or boolean ``prop`` asks for, when it is sent
    as text: form-based clients (the MCP Inspector) and models send
    ``"3"`` for 3, and an empty field for one left out. Text where text is
    allowed stays text; text that is not a number where one is expected is
    a ToolError naming the argument."""
    kinds = prop.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    if "string" in kinds:
        return value
    word = value.strip()
    if "null" in kinds and word.lower() in ("", "null"):  # an empty form field: left out
        return None
    if "boolean" in kinds and word.lower() in ("true", "false"):
        return word.lower() == "true"
    if "integer" in kinds or "number" in kinds:
        try:
            number = float(word)
        except ValueError:
            number = None
        if number is not None and math.isfinite(number):
            if number.is_integer() and "integer" in kinds:
                return int(number)
            if "number" in kinds:
                return number
        want = "a whole number" if "integer" in kinds else "a number"
        raise ToolError(f"{tool}: bad arguments: {key} must be {want} (such as 3), got {json.dumps(value)}")
    if "boolean" in kinds:
        raise ToolError(f"{tool}: bad arguments: {key} must be true or false, got {json.dumps(value)}")
    return value


def describe_error(error: "jsonschema.ValidationError", props: Mapping[str, Any]) -> str:
    """One validation error in words an agent can act on."""
    where = "/".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        return f"{error.message}; the arguments are {', '.join(props)}"
    if error.validator == "required":
        return error.message
    if error.validator == "type":
        want = error.validator_value if isinstance(error.validator_value, str) else " or ".join(error.validator_value)
        return f"{where} must be {want}, got {json.dumps(error.instance)}"
    return f"{where}: {error.message}"
