"""Issue 12, item 17: control characters in names and messages made the XML ill-formed.

Every character XML 1.0 forbids (C0 controls but tab, line feed and carriage return; U+FFFE,
U+FFFF; lone surrogates) is shown escaped (``\\x01``), so every XML output parses.
"""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET

import pytest
from hostile_text import ALL, XML, hostile_results

from steadybench.cli import main
from steadybench.output.files import results_to_xml
from steadybench.output.sanitize import xml_text
from steadybench.output.writers import WRITERS


@pytest.mark.parametrize("name", XML)
def test_xml_text_always_parses(name):
    element = ET.Element("x", {"name": xml_text(name)})
    element.text = xml_text(name)
    back = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert "\\" in back.get("name") and back.text == back.get("name")


def test_results_xml_parses_with_hostile_names_everywhere(tmp_path):
    results = hostile_results()
    root = ET.fromstring(results_to_xml(results))
    names = [b.get("name") for b in root.iter("benchmark")]
    assert len(names) == len(ALL)
    assert "c0 \\x00\\x01\\x02" in names[ALL.index(XML[0])]
    assert names[ALL.index(XML[2])] == "lone surrogate \\ud800"
    # the file the writer leaves parses too, and every other writer copes with the names
    for fmt, writer in WRITERS.items():
        writer(results, tmp_path / f"r.{fmt}")
    ET.parse(tmp_path / "r.xml")


def test_run_xml_parses_with_control_characters_in_names(tmp_path, capsys):
    bench = tmp_path / "bench.py"
    bench.write_text(textwrap.dedent("""
        import steadybench as sb

        @sb.benchmark(name="bell\\x07 esc\\x1b nul\\x00 \\ufffe", s=["v\\x01\\x02", "\\x1f"])
        def hostile(s):
            return lambda: None
    """))
    out = tmp_path / "r.xml"
    assert main(["run", str(bench), "--in-process", "-n", "3", "-q", "--xml", str(out)]) == 0, \
        capsys.readouterr().err
    root = ET.parse(out).getroot()
    assert [b.get("name") for b in root.iter("benchmark")] == \
        ["bell\\x07 esc\\x1b nul\\x00 \\ufffe"] * 2
    assert {p.get("value") for p in root.iter("param")} == {"v\\x01\\x02", "\\x1f"}
