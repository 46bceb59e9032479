"""Reading a digitised pin signal: WAV files and CSV exports (source ``002`` §6).

The paper digitises the pin with a sound card (24-bit, 192 kHz); oscilloscopes and logic
analysers export CSV files of ``time,value`` rows. Both become a :class:`Capture`: the samples
of one channel as floats, the sample rate and where the samples came from. Every problem with
the file is one :class:`CaptureError` line naming the file (and the line of a CSV).
"""

from __future__ import annotations

import csv
import math
import struct
import wave
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import SteadybenchError
from ..fileio import read_user_text

#: rows of a CSV that may precede the numbers (scope and analyser headers) before the file is
#: refused as having no data
MAX_HEADER_LINES = 200
#: largest relative deviation of one time step from the median step for a CSV to count as
#: evenly sampled
EVEN_TOLERANCE = 0.02
#: multipliers of ``time_unit``
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}

_FLOAT_GUID_TAIL = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"


class CaptureError(SteadybenchError):
    """A capture cannot be read or holds no usable pin signal."""


@dataclass
class Capture:
    """One channel of a digitised signal.

    ``values`` are the samples (floats; WAV samples scaled to −1..1); ``rate`` the sample rate
    in Hz and ``start`` the time of the first sample in seconds. ``times`` is set only for a
    logic-level CSV whose rows are transitions at uneven times. ``clip`` is the pair of values
    that mean the input was clipped (the full-scale codes of a WAV), or None when unknown.
    """

    values: np.ndarray
    rate: float
    source: str
    description: str
    start: float = 0.0
    times: np.ndarray | None = None
    clip: tuple[float, float] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def period(self) -> float:
        return 1.0 / self.rate

    @property
    def duration(self) -> float:
        if self.times is not None and self.times.size:
            return float(self.times[-1] - self.times[0])
        return self.values.size / self.rate

    def to_dict(self) -> dict[str, object]:
        return {"source": self.source, "description": self.description, "rate_hz": self.rate,
                "samples": int(self.values.size), "duration_s": self.duration,
                "start_s": self.start, "even": self.times is None, "notes": list(self.notes)}


# ---------------------------------------------------------------------------- WAV
def _pcm_to_float(data: bytes, width: int) -> tuple[np.ndarray, float]:
    """Interleaved little-endian PCM bytes as floats in −1..1, and the scale (full-scale code)."""
    if width == 1:  # 8-bit WAV is unsigned
        return (np.frombuffer(data, dtype=np.uint8).astype(np.float64) - 128.0) / 128.0, 128.0
    if width == 2:
        return np.frombuffer(data, dtype="<i2").astype(np.float64) / 32768.0, 32768.0
    if width == 3:
        raw = np.frombuffer(data, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        ints = raw[:, 0] | (raw[:, 1] << 8) | (raw[:, 2] << 16)
        ints = np.where(ints >= 1 << 23, ints - (1 << 24), ints)
        return ints.astype(np.float64) / float(1 << 23), float(1 << 23)
    if width == 4:
        return np.frombuffer(data, dtype="<i4").astype(np.float64) / float(1 << 31), \
            float(1 << 31)
    raise CaptureError(f"{width * 8}-bit PCM is not supported (8, 16, 24 or 32-bit)")


def _riff_chunks(blob: bytes, path: Path) -> dict[bytes, bytes]:
    if len(blob) < 12 or blob[:4] not in (b"RIFF", b"RIFX") or blob[8:12] != b"WAVE":
        raise CaptureError(f"{path}: not a WAV file (no RIFF/WAVE header)")
    chunks: dict[bytes, bytes] = {}
    pos = 12
    while pos + 8 <= len(blob):
        tag = blob[pos:pos + 4]
        (size,) = struct.unpack("<I", blob[pos + 4:pos + 8])
        body = blob[pos + 8:pos + 8 + size]
        chunks.setdefault(tag, body)
        pos += 8 + size + (size & 1)
    return chunks


def _read_riff_wav(path: Path) -> tuple[np.ndarray, int, float, str, float]:
    """A WAV the standard library's :mod:`wave` does not read (Python 3.11): IEEE float
    (format 3) or WAVE_FORMAT_EXTENSIBLE with a float or PCM sub-format (common for 24-bit
    recordings): (interleaved samples, channels, rate, description, full-scale value)."""
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise CaptureError(f"{path}: cannot read ({exc})") from None
    chunks = _riff_chunks(blob, path)
    fmt = chunks.get(b"fmt ")
    if fmt is None or len(fmt) < 16:
        raise CaptureError(f"{path}: not a valid WAV file (no format chunk)")
    tag, channels, rate, _, align, bits = struct.unpack("<HHIIHH", fmt[:16])
    if tag == 0xFFFE and len(fmt) >= 40 and fmt[26:40] == _FLOAT_GUID_TAIL \
            and fmt[24:26] in (b"\x01\x00", b"\x03\x00"):
        tag = fmt[24]  # the sub-format: 1 PCM, 3 float
    if tag not in (1, 3):
        raise CaptureError(f"{path}: unsupported WAV encoding (format tag {tag}); use PCM "
                           "(8/16/24/32-bit) or IEEE float")
    data = chunks.get(b"data")
    if data is None or channels < 1 or rate <= 0:
        raise CaptureError(f"{path}: not a valid WAV file (no data chunk, or {channels} "
                           f"channels at {rate} Hz)")
    if tag == 1:
        width = align // channels if align else (bits + 7) // 8
        usable = len(data) - len(data) % (width * channels)
        try:
            values, scale = _pcm_to_float(data[:usable], width)
        except CaptureError as exc:
            raise CaptureError(f"{path}: {exc}") from None
        return values, channels, float(rate), f"WAV, {width * 8}-bit PCM", scale
    if bits not in (32, 64):
        raise CaptureError(f"{path}: not a valid WAV file ({bits}-bit float)")
    dtype = "<f4" if bits == 32 else "<f8"
    usable = len(data) - len(data) % (bits // 8 * channels)
    values = np.frombuffer(data[:usable], dtype=dtype).astype(np.float64)
    return values, channels, float(rate), f"WAV, {bits}-bit float", 0.0


def read_wav(path: str | Path, channel: int = 1) -> Capture:
    """One channel (1-based) of a WAV file: 8/16/24/32-bit PCM or 32/64-bit IEEE float, plain
    or WAVE_FORMAT_EXTENSIBLE."""
    p = Path(path)
    if not p.exists():
        raise CaptureError(f"{p}: no such file")
    if p.is_dir():
        raise CaptureError(f"{p}: is a directory, not a file")
    clip: tuple[float, float] | None = None
    try:
        with wave.open(str(p), "rb") as w:
            channels, width, rate = w.getnchannels(), w.getsampwidth(), w.getframerate()
            frames = w.getnframes()
            data = w.readframes(frames)
        if channels < 1 or rate <= 0:
            raise CaptureError(f"{p}: not a valid WAV file ({channels} channels, {rate} Hz)")
        usable = len(data) - len(data) % (width * channels)
        if usable < frames * width * channels:
            raise CaptureError(f"{p}: the WAV file is truncated: its header announces {frames} "
                               f"frames, it holds {usable // (width * channels)}")
        try:
            samples, scale = _pcm_to_float(data[:usable], width)
        except CaptureError as exc:
            raise CaptureError(f"{p}: {exc}") from None
        clip = ((-scale if width > 1 else -128.0) / scale, (scale - 1) / scale)
        description = f"WAV, {width * 8}-bit PCM"
        rate_f = float(rate)
    except wave.Error as exc:
        if "unknown format: 3" in str(exc) or "unknown format: 65534" in str(exc):
            samples, channels, rate_f, description, scale = _read_riff_wav(p)
            clip = (-1.0, 1.0) if not scale else (-1.0, (scale - 1) / scale)
        else:
            raise CaptureError(f"{p}: not a valid WAV file ({exc})") from None
    except (EOFError, struct.error) as exc:
        raise CaptureError(f"{p}: not a valid WAV file (corrupt or truncated: "
                           f"{exc or type(exc).__name__})") from None
    except OSError as exc:
        raise CaptureError(f"{p}: cannot read ({exc})") from None
    if not 1 <= channel <= channels:
        raise CaptureError(f"{p}: has {channels} channel(s); --channel must be 1 to {channels}, "
                           f"got {channel}")
    values = samples.reshape(-1, channels)[:, channel - 1].copy()
    if not np.all(np.isfinite(values)):
        raise CaptureError(f"{p}: the WAV data holds NaN or infinite samples")
    where = f", channel {channel} of {channels}" if channels > 1 else ""
    return Capture(values=values, rate=rate_f, source=str(p),
                   description=f"{description}, {rate_f:g} Hz{where}", clip=clip)


# ---------------------------------------------------------------------------- CSV
def _split(line: str, delimiter: str | None) -> list[str]:
    if delimiter is None:
        return line.split()
    return [f.strip() for f in next(csv.reader([line], delimiter=delimiter))]


def _guess_delimiter(lines: list[str]) -> str | None:
    """The delimiter of most of the last rows: comma, semicolon, tab, else whitespace."""
    sample = lines[-20:]
    for delimiter in (",", ";", "\t"):
        if sum(delimiter in line for line in sample) >= max(1, len(sample) // 2):
            return delimiter
    return None


def _column(spec: str | int | None, header: list[str] | None, fields: int, what: str,
            path: Path) -> int | None:
    """0-based index of a column given by 1-based number or by header name; None for none."""
    if spec is None or (isinstance(spec, str) and spec.lower() == "none"):
        return None
    text = str(spec).strip()
    if text.isdigit():
        index = int(text) - 1
        if not 0 <= index < fields:
            raise CaptureError(f"{path}: the data rows have {fields} column(s); the {what} "
                               f"column {text} does not exist")
        return index
    if header is not None:
        names = [h.strip().lower() for h in header]
        if text.lower() in names:
            return names.index(text.lower())
        raise CaptureError(f"{path}: no {what} column named {text!r} (header: "
                           f"{', '.join(h.strip() for h in header)})")
    raise CaptureError(f"{path}: no header line to find the {what} column {text!r} in; give "
                       "its number (1 = first)")


def _all_numbers(fields: list[str]) -> bool:
    try:
        return all(math.isfinite(float(f)) for f in fields if f)
    except ValueError:
        return False


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def read_csv(path: str | Path, time_column: str | int | None = 1,
             value_column: str | int = 2, rate: float | None = None,
             time_unit: str = "s") -> Capture:
    """A CSV of ``time,value`` rows as oscilloscopes and logic analysers export them.

    Lines before the first row whose chosen columns are numbers are header lines (the last of
    them names the columns); ``#`` comments and blank lines are skipped; the delimiter is a
    comma, semicolon, tab or whitespace. Columns are chosen by 1-based number or by header
    name; ``time_column=None`` reads values only and needs ``rate``. Times are in
    ``time_unit``. Rows must be evenly spaced in time (a constant sample rate), except in a
    logic-level export whose rows are transitions (two distinct values at uneven times).
    """
    p = Path(path)
    if time_unit not in TIME_UNITS:
        raise CaptureError(f"unknown time unit {time_unit!r} ({', '.join(TIME_UNITS)})")
    text = read_user_text(p, CaptureError)
    lines = [(i, raw.strip()) for i, raw in enumerate(text.splitlines(), 1)]
    lines = [(i, line) for i, line in lines if line and not line.startswith("#")]
    if not lines:
        raise CaptureError(f"{p}: empty file")
    delimiter = _guess_delimiter([line for _, line in lines])
    header: list[str] | None = None
    columns: tuple[int | None, int] | None = None
    times: list[float] = []
    values: list[float] = []
    why: CaptureError | None = None
    for count, (lineno, line) in enumerate(lines):
        fields = _split(line, delimiter)
        if columns is None:
            # Header lines until the chosen columns hold numbers.
            try:
                t_col = _column(time_column, header, len(fields), "time", p)
                v_col = _column(value_column, header, len(fields), "value", p)
                assert v_col is not None
                t_val = _number(fields[t_col]) if t_col is not None else None
                v_val = _number(fields[v_col])
            except CaptureError as exc:
                if _all_numbers(fields):  # a row of data: the named column is not there
                    raise
                why = exc
                header = fields
                if count >= MAX_HEADER_LINES:
                    break
                continue
            except (ValueError, IndexError):
                header = fields
                if count >= MAX_HEADER_LINES:
                    break
                continue
            columns = (t_col, v_col)
        else:
            t_col, v_col = columns
            try:
                t_val = _number(fields[t_col]) if t_col is not None else None
            except (ValueError, IndexError):
                raise CaptureError(f"{p}:{lineno}: the time column is not a number: "
                                   f"{line[:80]!r}") from None
            try:
                v_val = _number(fields[v_col])
            except (ValueError, IndexError):
                raise CaptureError(f"{p}:{lineno}: the value column is not a number: "
                                   f"{line[:80]!r}") from None
        if t_val is not None:
            times.append(t_val * TIME_UNITS[time_unit])
        values.append(v_val)
    if columns is None:
        if why is not None:
            raise why
        raise CaptureError(f"{p}: no rows of numbers in the chosen columns (time "
                           f"{time_column}, value {value_column}); pick them with "
                           "--time-column and --value-column")
    v = np.asarray(values, dtype=float)
    where = f"CSV, {v.size} rows"
    if columns[0] is None:
        if rate is None or not rate > 0:
            raise CaptureError(f"{p}: no time column: give the sample rate (--rate HZ)")
        return Capture(values=v, rate=float(rate), source=str(p),
                       description=f"{where}, {rate:g} Hz (given)")
    t = np.asarray(times, dtype=float)
    if t.size < 2:
        raise CaptureError(f"{p}: only {t.size} row(s) of samples")
    steps = np.diff(t)
    if np.any(steps <= 0):
        bad = int(np.flatnonzero(steps <= 0)[0]) + 1
        raise CaptureError(f"{p}: the time column does not increase (row {bad + 1} of the "
                           "data); is it the time column? (--time-column)")
    median = float(np.median(steps))
    even = float(np.max(np.abs(steps - median))) <= EVEN_TOLERANCE * median
    if not even:
        if np.unique(v).size <= 2:
            return Capture(values=v, rate=1.0 / float(np.min(steps)), source=str(p),
                           description=f"{where}, logic-level transitions", start=float(t[0]),
                           times=t)
        raise CaptureError(
            f"{p}: the samples are not evenly spaced in time (steps from {steps.min():.3g} to "
            f"{steps.max():.3g} s): the edge finder needs a constant sample rate")
    index = np.arange(t.size, dtype=float)
    slope, intercept = np.polyfit(index, t, 1)  # the rate from all rows, not one step
    if rate is not None and abs(rate * slope - 1.0) > EVEN_TOLERANCE:
        raise CaptureError(f"{p}: --rate {rate:g} Hz disagrees with the time column "
                           f"({1.0 / slope:g} Hz)")
    return Capture(values=v, rate=1.0 / float(slope), source=str(p),
                   description=f"{where}, {1.0 / slope:g} Hz", start=float(intercept))


def read_capture(path: str | Path, channel: int = 1, time_column: str | int | None = 1,
                 value_column: str | int = 2, rate: float | None = None,
                 time_unit: str = "s", fmt: str | None = None) -> Capture:
    """A WAV or CSV capture; the format from ``fmt`` (``wav``, ``csv``) or the extension
    (``.wav``; anything else is read as CSV)."""
    p = Path(path)
    kind = (fmt or ("wav" if p.suffix.lower() in (".wav", ".wave") else "csv")).lower()
    if kind == "wav":
        return read_wav(p, channel)
    if kind == "csv":
        return read_csv(p, time_column, value_column, rate, time_unit)
    raise CaptureError(f"unknown capture format {fmt!r} (wav, csv)")
