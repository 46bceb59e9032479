// The index's filters: name, group, machine, measure, regressed only. Rows are filtered by their
// data-* attributes; nothing is fetched.
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("#index tbody tr"));
  var name = document.getElementById("f-name");
  var group = document.getElementById("f-group");
  var machine = document.getElementById("f-machine");
  var measure = document.getElementById("f-measure");
  var regressed = document.getElementById("f-regressed");
  var shown = document.getElementById("shown");

  function apply() {
    var text = name.value.trim().toLowerCase();
    var count = 0;
    rows.forEach(function (row) {
      var d = row.dataset;
      var ok = (!text || d.name.indexOf(text) >= 0) &&
        (!group.value || d.group === group.value) &&
        (!machine.value || d.machine === machine.value) &&
        (!measure.value || d.measure === measure.value) &&
        (!regressed.checked || d.regressed === "1");
      row.hidden = !ok;
      if (ok) count++;
    });
    shown.textContent = count + " of " + rows.length + " series";
  }
  // the filters live in the address (#name=...&regressed=1) so a filtered view can be linked
  function fromHash() {
    var params = new URLSearchParams(location.hash.slice(1));
    name.value = params.get("name") || "";
    group.value = params.get("group") || "";
    machine.value = params.get("machine") || "";
    measure.value = params.get("measure") || "";
    regressed.checked = params.get("regressed") === "1";
    apply();
  }
  function toHash() {
    var params = new URLSearchParams();
    if (name.value) params.set("name", name.value);
    if (group.value) params.set("group", group.value);
    if (machine.value) params.set("machine", machine.value);
    if (measure.value) params.set("measure", measure.value);
    if (regressed.checked) params.set("regressed", "1");
    history.replaceState(null, "", "#" + params.toString());
    apply();
  }
  [name, group, machine, measure, regressed].forEach(function (el) {
    el.addEventListener("input", toHash);
    el.addEventListener("change", toHash);
  });
  document.getElementById("filters").addEventListener("submit", function (e) { e.preventDefault(); });
  fromHash();
  document.body.setAttribute("data-rendered-ms", performance.now().toFixed(1));
})();
