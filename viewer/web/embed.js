// roofline embed helper (docs/embedding.md): sizes every iframe that shows a roofline chart-only
// page (`roofline plot --format html --embed`, or embed.html) to the chart's height. The chart
// posts {type: "roofline:height", height} to this page; the iframe it comes from gets that height.
// Load it once per page, anywhere: it asks the charts already there to say their height again.
// An iframe with a data-roofline-height="fixed" attribute keeps the height it was given.
(function () {
  "use strict";
  if (window.__rooflineHeights) return;
  window.__rooflineHeights = true;
  window.addEventListener("message", function (e) {
    var d = e.data;
    if (!d || d.type !== "roofline:height" || typeof d.height !== "number") return;
    var frames = document.getElementsByTagName("iframe");
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      if (f.contentWindow === e.source && f.getAttribute("data-roofline-height") !== "fixed") {
        f.style.height = Math.min(Math.max(Math.ceil(d.height), 50), 20000) + "px";
      }
    }
  });
  function ask() {
    var frames = document.getElementsByTagName("iframe");
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].contentWindow) frames[i].contentWindow.postMessage({ type: "roofline:height?" }, "*");
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ask);
  else ask();
})();
