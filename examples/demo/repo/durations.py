"""Parse human-written durations such as "1h30m" or "45s" into seconds."""
import re

_UNITS = {"h": 3600, "m": 60, "s": 1}
_PART = re.compile(r"(\d)([hms])")


def parse_duration(text):
    """Return the number of seconds in `text`, e.g. "1h30m" -> 5400.

    Raises ValueError for empty or malformed input.
    """
    cleaned = text.strip().lower()
    if not cleaned:
        raise ValueError("empty duration")
    parts = _PART.findall(cleaned)
    if not parts or _PART.sub("", cleaned) != "":
        raise ValueError(f"malformed duration: {text!r}")
    return sum(int(amount) * _UNITS[unit] for amount, unit in parts)


def format_duration(seconds):
    """Inverse of parse_duration: 5400 -> "1h30m"."""
    if seconds < 0:
        raise ValueError("negative duration")
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = ""
    if hours:
        out += f"{hours}h"
    if minutes:
        out += f"{minutes}m"
    if secs or not out:
        out += f"{secs}s"
    return out
