"""Confidence levels and other fractions as users write them: ``0.95`` or ``95%``."""

from __future__ import annotations

from .errors import ConfigurationError


def parse_fraction(text: str, what: str, *, allow_auto: bool = False) -> float | None:
    """'0.95', '95%' → 0.95; 'auto' → None when allowed."""
    value = str(text).strip()
    if allow_auto and value.lower() == "auto":
        return None
    try:
        number = float(value[:-1]) / 100.0 if value.endswith("%") else float(value)
    except ValueError:
        raise ConfigurationError(f"{what} must be a number like 0.95 or 95%"
                                 + (" or 'auto'" if allow_auto else "") + f", got {text!r}") \
            from None
    if not 0 < number < 1:
        raise ConfigurationError(f"{what} must be between 0 and 1 (exclusive), got {text}")
    return number
