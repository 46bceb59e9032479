"""Finding the edges of a digitised pin signal (source ``002`` §6).

"We measured the position of an edge … by looking for the inflection point (the point where the
second derivative changes sign) between two neighboring peaks … using the numerical
approximations of the derivatives. We also used second-order interpolation to determine the
zero-crossing point of the second derivative. Thus, we obtain the position of the inflection
point with sub-sample resolution." (§6)

Steps, for each capture:

1. **Levels.** The low and high level are the centres of a two-cluster split of the samples
   (robust to the duty cycle: a pin high 1 % of the time still has two levels); the noise is
   1.4826 × the median absolute second difference / √6 (edges are a small share of the
   samples, so the median sees the flat parts).
2. **Hysteresis.** A sample above ``low + (centre + band/2)·amplitude`` makes the state high,
   one below ``low + (centre − band/2)·amplitude`` makes it low (a Schmitt trigger; defaults
   0.5 and 0.4, i.e. 30 % and 70 %): noise inside the band never makes an edge, and edges
   alternate rising, falling, rising...
3. **Mid-level crossing.** Around each change of state, ±:data:`WINDOW` samples are
   interpolated band-limited (polyphase FIR, Kaiser window, ×:data:`UPSAMPLE`): a sound card's
   or oscilloscope's anti-alias filter makes the signal band-limited, so this reconstructs the
   edge between the samples. The edge is where the reconstruction crosses the middle level
   next to its steepest point (linear between the reconstructed points). §6's inflection point
   (the zero of the second difference, by second-order interpolation) is the fallback when
   there is no such crossing: at the steepest point the second derivative is flat, so noise
   moves its zero far (issue 27 item 3: widths 0.47 samples off, 8 × the noise limit
   √2·σ/slope, on a 48 kHz capture where the crossing stays within 2 × of it).

A linear, time-invariant input stage gives every rising edge the same shape (and every falling
edge its mirror image), so the crossings sit at the same delay after each true edge and
edge-to-edge times are exact up to noise. On synthetic RC edges band-limited at 0.45·fs with
noise at 10⁻³ of the amplitude the error of an edge-to-edge time is below 0.05 sample periods.

A logic-level capture (two distinct values) has no transition samples: each edge is put half a
sample before the first sample of the new level and is known only to ±half a sample (a
warning says so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..stats.robust import robust_sd
from .capture import Capture, CaptureError

#: samples on each side of an edge that the band-limited interpolation uses
WINDOW = 24
#: interpolation factor of the reconstruction
UPSAMPLE = 32
#: fewest samples a capture needs
MIN_SAMPLES = 16
#: share of the samples at the full-scale codes above which a capture is refused as clipped
CLIP_SHARE = 1e-3
#: the levels must differ by this many noise standard deviations
MIN_CONTRAST = 8.0
#: an edge's 10–90 % rise must span at least this many sample periods to be located between
#: the samples; below it the signal is not band-limited at this rate
MIN_RISE_SAMPLES = 1.0
#: neighbouring edges must be at least this many sample periods apart and this many rise
#: times: closer edges overlap (the converter filter's ringing, the RC tail) and shift each
#: other's inflection points (by up to 0.1–0.3 samples at 2–5 samples apart in simulations of
#: RC edges band-limited at 0.45·fs; below 0.1 from 6 samples)
MIN_SPACING_SAMPLES = 6.0
MIN_SPACING_RISES = 2.0


@dataclass(frozen=True)
class EdgeOptions:
    """Edge-finding settings: the hysteresis band (``band``, a share of the amplitude) around
    the threshold ``centre`` (a share of the way from the low to the high level)."""

    centre: float = 0.5
    band: float = 0.4

    def __post_init__(self) -> None:
        if not 0.0 < self.band < 1.0:
            raise CaptureError(f"--hysteresis must be between 0 and 1 (a share of the "
                               f"amplitude), got {self.band}")
        if not (self.centre - self.band / 2 > 0.0 and self.centre + self.band / 2 < 1.0):
            raise CaptureError(f"--threshold {self.centre} with --hysteresis {self.band} leaves "
                               "the band outside the levels (0..1)")


@dataclass
class Edges:
    """The edges of a capture: ``times`` in seconds, ``rising`` (True for low → high),
    ``positions`` in fractional samples, each edge's 10–90 % ``rise`` in samples, the
    ``levels`` (low, high), the ``noise`` standard deviation, the hysteresis ``thresholds`` and
    ``warnings``."""

    times: np.ndarray
    rising: np.ndarray
    positions: np.ndarray
    rise: np.ndarray
    levels: tuple[float, float]
    noise: float
    thresholds: tuple[float, float]
    rate: float
    logic_level: bool = False
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.times.size)

    def to_dict(self) -> dict[str, object]:
        return {
            "count": len(self), "rising": int(self.rising.sum()),
            "falling": int((~self.rising).sum()),
            "levels": list(self.levels), "noise": self.noise,
            "thresholds": list(self.thresholds), "rate_hz": self.rate,
            "logic_level": self.logic_level,
            "rise_samples_median": float(np.median(self.rise)) if self.rise.size else None,
            "times": [float(t) for t in self.times],
            "kinds": ["rising" if r else "falling" for r in self.rising],
        }


def _levels(x: np.ndarray) -> tuple[float, float]:
    """Centres (medians) of a two-cluster split of the samples (1-D k-means from the extremes)."""
    lo, hi = float(np.min(x)), float(np.max(x))
    for _ in range(50):
        cut = (lo + hi) / 2
        low, high = x[x <= cut], x[x > cut]
        if low.size == 0 or high.size == 0:
            break
        new = (float(np.median(low)), float(np.median(high)))
        if new == (lo, hi):
            break
        lo, hi = new
    return lo, hi


def _noise(x: np.ndarray) -> float:
    d2 = x[2:] - 2.0 * x[1:-1] + x[:-2]
    return robust_sd(d2, centre=0.0) / math.sqrt(6.0)


def _states(x: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """Indices where the hysteresis state changes, and whether each change is upwards.

    A change is reported at the first sample beyond the far threshold; the first decisive
    sample only sets the initial state."""
    decisive = np.where(x > high, 1, np.where(x < low, 0, -1))
    idx = np.where(decisive >= 0, np.arange(x.size), -1)
    idx = np.maximum.accumulate(idx)
    known = idx >= 0
    state = np.full(x.size, -1)
    state[known] = decisive[idx[known]]
    change = np.flatnonzero((state[1:] != state[:-1]) & (state[:-1] >= 0)) + 1
    return change, state[change] == 1


def _crossing(x: np.ndarray, start: int, stop: int, level: float) -> int:
    """The sample at or after which ``x`` passes ``level`` going from ``stop`` backwards to
    ``start``: the last index in [start, stop] on the far side of the level's crossing."""
    seg = x[start:stop + 1]
    above = seg > level
    flips = np.flatnonzero(above[1:] != above[:-1])
    return start + (int(flips[-1]) + 1 if flips.size else stop - start)


def _quadratic_root(y0: float, y1: float, y2: float, near: float) -> float:
    """Root of the parabola through (−1, y0), (0, y1), (1, y2) nearest ``near`` (second-order
    interpolation); the linear root when the parabola is flat or has no real root."""
    a = (y0 - 2.0 * y1 + y2) / 2.0
    b = (y2 - y0) / 2.0
    c = y1
    if b == 0 and a == 0:
        return near
    if abs(a) <= 1e-12 * max(abs(b), 1e-300):
        return -c / b
    disc = b * b - 4.0 * a * c
    if disc < 0:
        return -c / b if b != 0 else -b / (2.0 * a)
    root = math.sqrt(disc)
    return min(((-b + root) / (2.0 * a), (-b - root) / (2.0 * a)), key=lambda r: abs(r - near))


def _inflections(x: np.ndarray, centres: np.ndarray, rising: np.ndarray,
                 levels: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Fractional sample position of each edge's inflection point and its 10–90 % rise in
    samples, from the band-limited reconstruction around each centre."""
    from scipy import signal

    n = x.size
    offsets = np.arange(-WINDOW, WINDOW + 1)
    rows = np.clip(centres[:, None] + offsets[None, :], 0, n - 1)
    windows = x[rows]
    fine = signal.resample_poly(windows, UPSAMPLE, 1, axis=1, window=("kaiser", 10.0),
                                padtype="line")
    d1 = np.zeros_like(fine)
    d1[:, 1:-1] = (fine[:, 2:] - fine[:, :-2]) / 2.0
    d2 = np.zeros_like(fine)
    d2[:, 1:-1] = fine[:, 2:] - 2.0 * fine[:, 1:-1] + fine[:, :-2]
    mid = WINDOW * UPSAMPLE
    span = 2 * UPSAMPLE  # look for the steepest point within ±2 samples of the centre
    low, high = levels
    amp = high - low
    positions = np.empty(centres.size)
    rise = np.empty(centres.size)
    for i in range(centres.size):
        s = 1.0 if rising[i] else -1.0
        lo_i, hi_i = mid - span, mid + span
        m = lo_i + int(np.argmax(s * d1[i, lo_i:hi_i]))
        # the mid-level crossing next to the steepest point, linear between the reconstructed
        # points: where the edge is steepest noise moves it least (σ / slope), unlike the
        # zero of the second derivative, which is flat there (issue 27 item 3)
        crossing = _mid_crossing(fine[i], m, (low + high) / 2.0, s)
        if crossing is not None:
            positions[i] = centres[i] + (crossing - mid) / UPSAMPLE
            f = s * (fine[i] - low) / amp if s > 0 else s * (fine[i] - high) / amp
            rise[i] = _rise(f, int(round(crossing)))
            continue
        # the sign change of d2 (+ to − along the edge's direction) nearest the steepest point
        row = s * d2[i]
        k_best = None
        for k in range(max(m - UPSAMPLE, 1), min(m + UPSAMPLE, row.size - 2)):
            if row[k] > 0 >= row[k + 1] and (k_best is None or abs(k - m) < abs(k_best - m)):
                k_best = k
        if k_best is None:
            frac = float(m)
        else:
            c = k_best if abs(row[k_best]) <= abs(row[k_best + 1]) else k_best + 1
            c = min(max(c, 1), row.size - 2)
            near = (k_best + 0.5) - c
            frac = c + _quadratic_root(row[c - 1], row[c], row[c + 1], near)
        positions[i] = centres[i] + (frac - mid) / UPSAMPLE
        f = s * (fine[i] - low) / amp if s > 0 else s * (fine[i] - high) / amp
        # 10 % and 90 % crossings around the inflection
        rise[i] = _rise(f, int(round(frac)))
    return positions, rise


def _mid_crossing(fine: np.ndarray, near: int, level: float, s: float) -> float | None:
    """Fractional index where ``fine`` crosses ``level`` in the edge's direction ``s``, the
    crossing nearest ``near`` within one sample period (linear interpolation), or None."""
    lo, hi = max(near - UPSAMPLE, 0), min(near + UPSAMPLE, fine.size - 1)
    seg = s * (fine[lo:hi + 1] - level)
    flips = np.flatnonzero((seg[:-1] < 0) & (seg[1:] >= 0))
    if flips.size == 0:
        return None
    k = int(flips[np.argmin(np.abs(flips + lo - near))])
    a, b = seg[k], seg[k + 1]
    return lo + k + (float(-a / (b - a)) if b != a else 0.0)


def _rise(f: np.ndarray, j: int) -> float:
    """The 10–90 % rise (in samples) of the normalised edge ``f`` around index ``j``."""
    a_idx = j
    while a_idx > 0 and f[a_idx] > 0.1:
        a_idx -= 1
    b_idx = j
    while b_idx < f.size - 1 and f[b_idx] < 0.9:
        b_idx += 1
    return (b_idx - a_idx) / UPSAMPLE


def find_edges(capture: Capture, options: EdgeOptions | None = None) -> Edges:
    """Every edge of ``capture`` (see the module docs), or one :class:`CaptureError` line
    saying why there is nothing to measure: too few samples, a constant or clipped signal, no
    edge or a single one, edges too sharp (or too close) for the sample rate."""
    opts = options or EdgeOptions()
    x = np.asarray(capture.values, dtype=float)
    where = capture.source
    if x.size < (2 if capture.times is not None else MIN_SAMPLES):
        raise CaptureError(f"{where}: only {x.size} samples")
    distinct = np.unique(x)
    if distinct.size < 2:
        raise CaptureError(f"{where}: no edges found: the signal is constant (every sample "
                           f"is {x[0]:g}); is it the right channel or column?")
    if capture.clip is not None:
        at_clip = int(np.sum((x <= capture.clip[0]) | (x >= capture.clip[1])))
        if at_clip > CLIP_SHARE * x.size:
            raise CaptureError(f"{where}: the signal is clipped ({at_clip} samples at full "
                               "scale): the edges' shape is lost; lower the input level")
    logic = distinct.size == 2
    if logic:
        low_level, high_level = float(distinct[0]), float(distinct[1])
        noise = 0.0
    else:
        low_level, high_level = _levels(x)
        noise = _noise(x)
    amp = high_level - low_level
    if not amp > MIN_CONTRAST * noise or amp <= 0:
        raise CaptureError(
            f"{where}: no edges found: the signal is constant up to its noise (levels "
            f"{low_level:.4g} and {high_level:.4g}, noise σ = {noise:.3g}); is it the right "
            "channel or column?")
    th_low = low_level + (opts.centre - opts.band / 2) * amp
    th_high = low_level + (opts.centre + opts.band / 2) * amp
    change, up = _states(x, th_low, th_high)
    if change.size == 0:
        raise CaptureError(f"{where}: no edges found: the signal never crosses the hysteresis "
                           f"band ({th_low:.4g} to {th_high:.4g}; levels {low_level:.4g} and "
                           f"{high_level:.4g})")
    if change.size == 1:
        kind = "rising" if up[0] else "falling"
        t = capture.start + change[0] / capture.rate if capture.times is None \
            else capture.times[change[0]]
        raise CaptureError(f"{where}: only one edge found ({kind}, at {t:.6g} s): a time needs "
                           "two edges")
    warnings: list[str] = []
    if logic:
        if capture.times is not None:
            times = capture.times[change].astype(float)
            warnings.append("logic-level transitions: each edge is the analyser's own time "
                            "stamp; its resolution is the analyser's")
        else:
            times = capture.start + (change - 0.5) / capture.rate
            warnings.append(f"logic-level capture (two values): each edge is known only to "
                            f"±half a sample ({0.5 / capture.rate:.3g} s); the inflection "
                            "method (§6) needs the analog signal")
        return Edges(times=times, rising=up, positions=change - 0.5,
                     rise=np.zeros(change.size), levels=(low_level, high_level), noise=noise,
                     thresholds=(th_low, th_high), rate=capture.rate, logic_level=True,
                     warnings=warnings)
    if capture.times is not None:  # uneven, not two-level: read_csv refuses these
        raise CaptureError(f"{where}: the samples are not evenly spaced")
    # centre of each transition: the mid-level crossing before the decisive sample
    mid_level = (low_level + high_level) / 2
    previous = np.concatenate([[0], change[:-1]])
    centres = np.array([_crossing(x, int(a), int(b), mid_level)
                        for a, b in zip(previous, change)])
    # no samples strictly inside the 10–90 % band on most edges: the edges are not resolved
    inside = np.array([int(np.sum((x[max(c - 3, 0):c + 3] > low_level + 0.1 * amp)
                                  & (x[max(c - 3, 0):c + 3] < low_level + 0.9 * amp)))
                       for c in centres])
    if np.median(inside) < 1:
        raise CaptureError(
            f"{where}: the sample rate ({capture.rate:g} Hz) is too low to resolve the edges: "
            f"they jump between the levels from one sample to the next, so the inflection "
            f"point cannot be located; sample at more than {2 * capture.rate:g} Hz (at least "
            "two samples on each edge), or low-pass the pin (an RC filter) so that each edge "
            f"spans two or more samples at this rate")
    positions, rise = _inflections(x, centres, up, (low_level, high_level))
    median_rise = float(np.median(rise))
    if median_rise < MIN_RISE_SAMPLES:
        raise CaptureError(
            f"{where}: the sample rate ({capture.rate:g} Hz) is too low to resolve the edges: "
            f"their 10–90 % rise is {median_rise:.2f} samples; at least {MIN_RISE_SAMPLES:g} "
            f"is needed, i.e. ≥ {capture.rate * MIN_RISE_SAMPLES / median_rise:.4g} Hz (more if "
            "the edges are sharper than this rate shows), or low-pass the pin")
    gaps = np.diff(positions)
    shortest = int(np.argmin(gaps))
    spacing = float(gaps[shortest])
    needed = max(MIN_SPACING_SAMPLES, MIN_SPACING_RISES * median_rise)
    if spacing < needed:
        at = capture.start + positions[shortest] / capture.rate
        raise CaptureError(
            f"{where}: the sample rate ({capture.rate:g} Hz) is too low for the shortest pulse "
            f"(at {at:.6g} s): its edges are {spacing:.2f} samples apart, and edges closer than "
            f"{needed:.3g} samples shift each other's inflection points; sample at ≥ "
            f"{capture.rate * needed / spacing:.4g} Hz or make the pulses longer")
    times = capture.start + positions / capture.rate
    return Edges(times=times, rising=up, positions=positions, rise=rise,
                 levels=(low_level, high_level), noise=noise, thresholds=(th_low, th_high),
                 rate=capture.rate, warnings=warnings)
