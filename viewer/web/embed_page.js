// roofline chart-only page (docs/embedding.md): the chart switch, the link to the full viewer, and
// this page's height told to the page around it (`{type: "roofline:height", height}` by
// postMessage; dist/embed.js sizes the iframe). Plain script: nothing here is in the viewer's wasm.
(function () {
  "use strict";
  var bar = document.getElementById("roofline-embed-bar");
  var full = document.getElementById("roofline-full");
  // The view shown, as the viewer's URL query: the address's, else the page's saved view.
  function query() {
    if (location.search.length > 1) return location.search.slice(1);
    var m = document.getElementById("roofline-manifest");
    try {
      return m ? JSON.parse(m.textContent).query : "";
    } catch (e) {
      return "";
    }
  }
  // The chart drawn, by its title (the viewer may open a trace on the time-based chart itself).
  function shown() {
    var t = document.querySelector("#chart text");
    return t && /^Time/.test(t.textContent) ? "time" : "hierarchical";
  }
  function mark() {
    var c = shown();
    var b = bar ? bar.querySelectorAll("button[data-chart]") : [];
    for (var i = 0; i < b.length; i++) b[i].setAttribute("aria-pressed", String(b[i].getAttribute("data-chart") === c));
  }
  // Another chart: the page again with `chart=` changed. A notebook's frame (srcdoc, no address
  // of its own) keeps the view on its frame element, which its bootstrap reads.
  function go(chart) {
    var p = new URLSearchParams(query());
    p.set("chart", chart);
    if (location.protocol === "about:") {
      try {
        frameElement.setAttribute("data-roofline-query", p.toString());
        location.reload();
      } catch (e) {}
      return;
    }
    location.replace("?" + p.toString());
  }
  if (bar) {
    bar.addEventListener("click", function (e) {
      var c = e.target && e.target.getAttribute && e.target.getAttribute("data-chart");
      if (c && c !== shown()) go(c);
    });
  }
  // embed.html: the full viewer beside it, on the view shown now (the viewer keeps the address in
  // step with the view), offered once the address names a bundle.
  if (full && full.hasAttribute("data-viewer")) {
    full.hidden = !/[?&]bundle=/.test(location.search);
    full.addEventListener("click", function () {
      full.href = full.getAttribute("data-viewer") + location.search;
    });
  }
  var told = 0;
  function tell() {
    mark();
    var app = document.querySelector(".app");
    if (!app || parent === window) return;
    var h = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (h > 0 && h !== told) {
      told = h;
      parent.postMessage({ type: "roofline:height", height: h }, "*");
    }
  }
  addEventListener("message", function (e) {
    if (e.source === parent && e.data && e.data.type === "roofline:height?") {
      told = 0;
      tell();
    }
  });
  // At most one measure per 50 ms, however busy the chart (hover redraws its tooltip).
  var pending = false;
  function soon() {
    if (pending) return;
    pending = true;
    setTimeout(function () {
      pending = false;
      tell();
    }, 50);
  }
  if (window.ResizeObserver) new ResizeObserver(soon).observe(document.documentElement);
  new MutationObserver(soon).observe(document.body, { childList: true, subtree: true });
})();
