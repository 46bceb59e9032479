"""The typed records that replaced string-keyed reads of estimate and execution dicts (issue 24):
each reads the JSON it always read, and the files written from it are unchanged."""

from __future__ import annotations

import dataclasses
import math
import xml.etree.ElementTree as ET

import pytest

from steadybench.evaluate.levels import Level
from steadybench.history.record import MeasurementRow, measurements_of
from steadybench.methods.base import MethodEstimate, build_estimate
from steadybench.model.estimate import Estimate
from steadybench.model.execution import Execution
from steadybench.model.results import CaseResult
from steadybench.output.comparedata import OverallGain, overall_gain
from steadybench.output.files import _xml_estimate


def test_a_methods_mapping_is_read_once_into_a_method_estimate():
    own = MethodEstimate.read({"value": 2.0, "ci_low": 1.5, "ci_high": 2.5, "confidence": 0.9,
                               "statistic": "slope", "overhead": 3e-8, "r2": 0.99})
    assert (own.value, own.ci_low, own.ci_high, own.confidence) == (2.0, 1.5, 2.5, 0.9)
    assert own.statistic == "slope" and own.error is None
    assert own.figures == {"overhead": 3e-8, "r2": 0.99}  # every other key is a figure
    assert not own.own_spread  # no within_cov given: the spread comes from elsewhere
    # a within_cov of None is the method saying "no spread", not an absent key
    assert MethodEstimate.read({"value": 1.0, "within_cov": None}).own_spread
    assert MethodEstimate.read(own) is own
    with pytest.raises(dataclasses.FrozenInstanceError):
        own.value = 3.0  # type: ignore[misc]


def test_build_estimate_reads_the_method_estimate():
    case = CaseResult("b", "b", {})
    case.add_run("ok", {"wall_time": 1.0})
    case.accumulate({"wall_time": 1.0})
    given = {"value": 2.0, "ci_low": 1.0, "ci_high": 3.0, "confidence": 0.95,
             "within_cov": 0.25, "bias_bound": 1e-9}
    from_mapping = build_estimate(case, given, "batch")
    assert from_mapping == build_estimate(case, MethodEstimate.read(given), "batch")
    assert (from_mapping.value, from_mapping.ci_low, from_mapping.ci_high) == (2.0, 1.0, 3.0)
    assert from_mapping.within_cov == 0.25 and from_mapping.statistic == "mean"
    assert from_mapping.fields["bias_bound"] == 1e-9
    failed = build_estimate(case, {"value": None}, "direct")
    assert failed.value is None and failed.error == "no successful runs"
    # two executions with values: the headline is across them, not the method's own
    case.processes = [Execution(index=0, value=1.0, n=1), Execution(index=1, value=3.0, n=1)]
    across = build_estimate(case, given, "batch")
    assert across.level == "executions" and across.value == 2.0
    assert across.fields["execution_values"] == [1.0, 3.0]


def test_measurement_rows_keep_what_the_table_held():
    doc = {"benchmarks": [
        {"name": "f", "implementation": "f", "params": {"n": 3},
         "estimate": {"value": 2e-6, "ci_low": 1e-6, "ci_high": 3e-6, "unit": "s",
                      "level": "executions"},
         "processes": [{"index": 0, "value": 1e-6}, {"index": 1, "value": 3e-6}]},
        # written before levels were recorded: the row says so (None), not the default
        {"name": "g", "estimate": {"value": "4e-6", "ci_low": None}},
        # no value and no executions: no row
        {"name": "h", "estimate": {"value": float("nan")}},
        # an estimate whose figures are unreadable: the executions still give the value
        {"name": "k", "estimate": {"value": 1.0, "fields": "broken"},
         "processes": [{"value": 5.0}]},
    ]}
    rows = measurements_of(doc)
    assert [r.benchmark for r in rows] == ["f", "g", "k"]
    f, g, k = rows
    assert isinstance(f, MeasurementRow)
    assert (f.value, f.ci_low, f.ci_high, f.level) == (2e-6, 1e-6, 3e-6, "executions")
    assert f.params == "n=3" and f.n_executions == 2 and f.executions == [1e-6, 3e-6]
    assert (g.value, g.ci_low, g.level, g.unit, g.executions) == (4e-6, None, None, "s", [4e-6])
    assert k.value == 5.0 and k.ci_low is None


def test_levels_read_back_from_an_evaluations_json():
    level = Level(1.5e-3, 2e-5, 0.4, 12)
    assert Level.from_dict(level.to_dict()) == level
    odd = Level.from_dict({"value": None, "sd": "x", "runs": True})
    assert math.isnan(odd.value) and math.isnan(odd.sd) and odd.runs == 0


def test_overall_gain_is_typed():
    doc = {"suite": {"confidence": 0.95,
                     "gain": {"median": {"all": {"gain": 0.2, "speedup": None}}}}}
    gain = overall_gain(doc)
    assert gain == OverallGain(speedup=pytest.approx(1.25), gain=0.2, ci=None, label="median",
                               confidence=0.95)
    assert overall_gain({"overall": {"speedup": 1.1, "ci": [1.0, 1.2]}}) == OverallGain(
        1.1, None, (1.0, 1.2), "speedup")
    assert overall_gain({"benchmarks": []}) is None


def test_the_xml_estimate_is_written_from_the_estimate():
    est = Estimate(value=2e-6, ci_low=1e-6, ci_high=3e-6, confidence=0.95, method="batch",
                   statistic="mean", fields={"bias_bound": 1e-9})
    parent = ET.Element("benchmark")
    _xml_estimate(parent, est.to_dict())
    element = parent.find("estimate")
    assert element is not None
    assert element.get("value") == repr(2e-6) and element.get("undefined") is None
    assert element.get("n_executions") == "1" and element.get("between_cov") is None
    assert element.find("fields") is not None
    failed = ET.Element("benchmark")
    _xml_estimate(failed, Estimate.failed("crashed", "batch").to_dict())
    element = failed.find("estimate")
    assert element is not None and element.get("undefined") == "true"
    assert element.find("error").text == "crashed"  # type: ignore[union-attr]
    none = ET.Element("benchmark")
    _xml_estimate(none, None)
    assert none.find("estimate").attrib == {"undefined": "true"}  # type: ignore[union-attr]
