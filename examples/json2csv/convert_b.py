"""A small JSON-to-CSV converter, version B: as A, plus an extra pass
that cleans every text value (strips spaces, collapses runs of blanks) before writing.

Run as a program: ``python convert_b.py orders.json > orders.csv`` (no file: a generated
sample). As a benchmark (``steadybench ab convert_a.py convert_b.py --profile``) the case
``convert`` converts 2,000 generated orders per call.
"""

from __future__ import annotations

import csv
import io
import json
import random
import sys
from pathlib import Path

from steadybench import benchmark


def sample_json(n: int = 2000, seed: int = 1) -> str:
    rng = random.Random(seed)
    orders = [{"id": i, "customer": {"name": f"Customer {rng.randrange(500)}",
                                     "country": rng.choice(["DE", "FR", "PT", "NL"])},
               "items": [{"sku": f"SKU-{rng.randrange(10_000):05d}", "qty": rng.randrange(1, 9),
                          "price": round(rng.uniform(1, 200), 2)}
                         for _ in range(rng.randrange(1, 5))],
               "note": "  gift wrap  " if rng.random() < 0.1 else ""}
              for i in range(n)]
    return json.dumps(orders)


def flatten(record: dict, prefix: str = "") -> dict:
    """Nested objects become dotted columns; lists are summarised by length and total."""
    row: dict = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            row.update(flatten(value, name + "."))
        elif isinstance(value, list):
            row[name + ".count"] = len(value)
            row[name + ".total"] = round(sum(v.get("qty", 1) * v.get("price", 0)
                                             for v in value), 2)
        else:
            row[name] = value
    return row


def write_csv(rows: list[dict]) -> str:
    out = io.StringIO()
    columns = sorted({key for row in rows for key in row})
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def clean_text(rows: list[dict]) -> list[dict]:
    """The extra pass: every string value stripped and its inner runs of blanks collapsed."""
    cleaned = []
    for row in rows:
        new = {}
        for key, value in row.items():
            if isinstance(value, str):
                value = " ".join(part for part in value.split(" ") if part)
            new[key] = value
        cleaned.append(new)
    return cleaned


def convert(text: str) -> str:
    records = json.loads(text)
    rows = [flatten(record) for record in records]
    return write_csv(clean_text(rows))


DATA = sample_json()


@benchmark
def convert_orders():
    return lambda: convert(DATA)


if __name__ == "__main__":
    source = Path(sys.argv[1]).read_text() if len(sys.argv) > 1 else DATA
    sys.stdout.write(convert(source))
