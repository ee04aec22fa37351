// roofline viewer: what the page does with the files dropped or picked, and with `?trace=URL`,
// before the viewer (wasm) opens bundles. A classic script, loaded with the page (index.html) or
// inlined (offline.html), small, outside the viewer's wasm so that its first paint does not grow.
//
//   rooflineOpen(inputs, machine, options) -> Promise<Array<File | string>>
//     inputs: the files opened (a FileList or an array of File), URLs to import (strings), or
//     the number of an earlier import (made again against another machine or with other options);
//     machine: null, the URL of a machine bundle, or [name, bytes] of an open one (undefined
//     with an earlier import's number: the machine that import was placed against);
//     options: null, or `roofline import`'s flags as an array of words (["--convention",
//     "2020"]), for every import of this call.
//   rooflineCatalogueFill(chosen): fills "Ceilings from"'s GPU catalogue group with the
//     catalogue's entries that give ceilings (`--ceilings datasheet:ID`), from the importer.
//   It (rooflineOpen) resolves with what the viewer opens, in order: the bundles among the files as they are;
//   a machine bundle among them also bounds the imports of the same drop (as `--machine`), and a
//   model's Hugging Face config.json is read with them (as `--model-config`); every
//   other file goes to the importer (importer.js, loaded the first time one is opened, never
//   with the page), which tells them apart as `roofline import` does: each torch.profiler trace
//   alone, the Nsight Compute CSV files together as the captures of one run. Each import gives a bundle, a File whose `key`
//   names its inputs for a later import against another machine, or the CLI's message for the
//   same input (a string; "cancelled" when the reader cancelled it). Nothing is uploaded: the
//   import runs in a Web Worker of this page, and its progress shows at the top of the page.
(() => {
  const kept = [];
  // The machine each kept import was last placed against.
  const machines = [];
  // The model configuration each kept import was read with (--model-config), if any.
  const configs = [];

  // How much of a file's start tells a bundle from what the importer reads (the CLI looks at
  // as much for a trace's `traceEvents` where a bundle was expected).
  const HEAD = 1 << 20;

  // "bundle", "machine" (a bundle with machines and no kernels) or "import" (anything else: the
  // importer tells a trace from CSV, and says what neither reads).
  // Each file's start as `kind` read it, for the pairing of a bundle with its columns file.
  const heads = new WeakMap();
  async function kind(file) {
    const head = new Uint8Array(await file.slice(0, HEAD).arrayBuffer());
    heads.set(file, head);
    if (columnsId(head) !== null) return "columns";
    let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
    while (i < head.length && " \t\r\n".includes(String.fromCharCode(head[i]))) i++;
    if (head[i] !== 0x7b /* { */) return /\.json$/i.test(file.name) && head[0] !== 0x1f && head[i] !== 0x5b ? "bundle" : "import";
    const text = new TextDecoder().decode(head);
    if (text.includes('"traceEvents"')) return "import";
    // A model's Hugging Face config.json (--model-config for the traces opened with it).
    if (!text.includes('"schema_version"') && /"(model_type|architectures)"\s*:/.test(text)) return "config";
    // A machine bundle is small: read whole to see whether it holds kernels.
    if (file.size <= HEAD) {
      try {
        const b = JSON.parse(text);
        if (b && Array.isArray(b.machines) && b.machines.length && !(b.kernels || []).length) return "machine";
      } catch (_) {
        // The viewer's reader says what is wrong with it.
      }
    }
    return "bundle";
  }

  // Columns files (`roofline_model::bundle::columns`): a bundle of 10,000 entries or more,
  // written by the CLI, names one at its start ({file, id}); the columns file's header carries
  // the same id. Read in the bundle's place, it opens a million launches without parsing text.
  const COLUMNS_REF = /^"columns"\s*:\s*\{\s*"file"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"id"\s*:\s*"([^"\\]*)"\s*\}/;
  function namedColumns(head) {
    const text = new TextDecoder().decode(head.subarray(0, 4096));
    const at = text.indexOf('"columns"');
    // Only the top level's first fields come before it.
    if (at < 0 || /"(provenance|kernels)"/.test(text.slice(0, at))) return null;
    const m = COLUMNS_REF.exec(text.slice(at));
    return m ? { file: JSON.parse(`"${m[1]}"`), id: m[2] } : null;
  }
  // A columns file's id, from its first bytes (null: not a columns file).
  function columnsId(head) {
    if (head.length < 16 || new TextDecoder().decode(head.subarray(0, 8)) !== "ROOFCOLS") return null;
    const n = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(12, true);
    return new TextDecoder().decode(head.subarray(16, 16 + n));
  }

  // The columns file that the bundle at `url` names, when the server has it with the bundle's
  // id; else null (the viewer then fetches the bundle). Only the bundle's first bytes are read.
  globalThis.rooflineColumns = async (url) => {
    try {
      const at = new URL(url, location.href);
      const resp = await fetch(at);
      if (!resp.ok || !resp.body) return null;
      const reader = resp.body.getReader();
      let head = new Uint8Array(0);
      while (head.length < 4096) {
        const { done, value } = await reader.read();
        if (done) break;
        const h = new Uint8Array(head.length + value.length);
        h.set(head);
        h.set(value, head.length);
        head = h;
      }
      reader.cancel().catch(() => {});
      const named = namedColumns(head);
      if (!named) return null;
      const c = await fetch(new URL(named.file, at));
      if (!c.ok) return null;
      const bytes = new Uint8Array(await c.arrayBuffer());
      return columnsId(bytes) === named.id ? bytes : null;
    } catch (_) {
      return null;
    }
  };

  function loadImporter() {
    if (globalThis.rooflineImporter) return Promise.resolve();
    return new Promise((ok, fail) => {
      const s = document.createElement("script");
      s.src = "importer.js";
      s.onload = ok;
      s.onerror = () =>
        fail("the importer (importer.js, beside this page) could not be loaded: open the built site (cargo xtask web), or use `roofline import` and open its bundle");
      document.head.append(s);
    });
  }

  // The progress bar at the top of the page, with a button that cancels.
  function bar() {
    const el = document.createElement("div");
    el.id = "importing";
    el.setAttribute("role", "status");
    el.style.cssText =
      "position:fixed;z-index:10;top:0;left:0;right:0;padding:6px 16px;font:13px system-ui,sans-serif;background:#eef4fb;color:#111;border-bottom:1px solid #c8d4e3;display:flex;gap:10px;align-items:center";
    el.innerHTML = '<progress max="1" value="0" style="width:14em"></progress><span></span><button id="cancel-import" type="button">Cancel</button>';
    el.querySelector("button").onclick = () => globalThis.rooflineImporter && rooflineImporter.cancel();
    document.body.append(el);
    const [progress, text] = el.children;
    const mb = (n) => (n / 1e6).toFixed(1);
    return {
      tell(name, what, done, total) {
        progress.value = total > 0 ? done / total : 0;
        const amount = what === "importing kernels" ? `${done} of ${total} kernels` : `${mb(done)} of ${mb(total)} MB`;
        text.textContent = `${name}: ${what}, ${amount}. In this browser: nothing is uploaded.`;
      },
      remove: () => el.remove(),
    };
  }

  // One import: its inputs (kept under a key), the bundle made as a File, or the message.
  async function run(name, inputs, machine, options, config) {
    const key = kept.indexOf(inputs) >= 0 ? kept.indexOf(inputs) : kept.push(inputs) - 1;
    machines[key] = machine;
    configs[key] = config || null;
    const b = bar();
    b.tell(name, "starting the importer", 0, 0);
    try {
      await loadImporter();
      const made = await rooflineImporter.start(inputs, machine, options, (what, done, total) => b.tell(name, what, done, total), config || null);
      const file = new File([made.bundle], name, { type: "application/json" });
      file.key = key;
      return file;
    } catch (e) {
      return typeof e === "string" ? e : String((e && e.message) || e);
    } finally {
      b.remove();
    }
  }

  const named = (names) => (names.length > 1 ? `${names[0]} and ${names.length - 1} more` : names[0]);
  const urlName = (u) => {
    const path = u.split(/[?#]/)[0];
    return decodeURIComponent(path.slice(path.lastIndexOf("/") + 1)) || u;
  };

  // "Ceilings from": the GPU catalogue's entries (asked of the importer once), as the options
  // of the group #catalogue, `chosen` ("datasheet:ID" or "none") selected.
  globalThis.rooflineCatalogueFill = async (chosen) => {
    try {
      await loadImporter();
      const entries = await rooflineImporter.catalogue();
      const group = document.getElementById("catalogue");
      if (!group) return;
      if (!group.childElementCount) {
        for (const [id, product] of entries) group.append(new Option(product, "datasheet:" + id));
      }
      const select = group.closest("select");
      const option = [...select.options].find((o) => o.value === chosen);
      if (option) option.selected = true;
    } catch (_) {
      // Without the importer the list stays empty; `roofline catalogue` lists the GPUs.
    }
  };

  // The charts the importer draws (`comm`, `sweep`), so that the viewer's first paint does not
  // carry them: into the element `into`, the chart's SVG (as #chart, which the SVG and PNG
  // downloads take) under its line of figures, or why there is nothing to draw (#no-CHART);
  // only the latest request for an element is shown.
  const drawing = {};
  globalThis.rooflineDraw = async (chart, bytes, width, device, into) => {
    const asked = (drawing[into] = (drawing[into] || 0) + 1);
    const esc = (t) => t.replace(/&/g, "&amp;").replace(/</g, "&lt;");
    const lines = (words) => (words ? `<p class="${chart}-figures">${esc(words)}</p>` : "");
    let html;
    try {
      await loadImporter();
      const [svg, words] = await rooflineImporter.draw(bytes, chart, width, device);
      html = `${lines(words)}<div class="chart">${svg.replace("<svg ", '<svg id="chart" ')}</div>`;
    } catch (e) {
      const why = String(e).split("\n");
      const words = why.length > 1 ? why.shift() : null;
      html = `${lines(words)}<p class="hint" id="no-${chart}">${esc(why.join("\n"))}</p>`;
    }
    const el = document.getElementById(into);
    if (asked === drawing[into] && el) el.innerHTML = html;
  };

  globalThis.rooflineOpen = async (inputs, machine, options) => {
    const out = [];
    if (typeof inputs === "number") {
      const again = kept[inputs] || [];
      if (machine === undefined) machine = machines[inputs] ?? null;
      out.push(await run(named(again.map((i) => (typeof i === "string" ? urlName(i) : i.name))), again, machine, options, configs[inputs]));
      return out;
    }
    // URLs as the page resolves them (the worker's own base is a blob: URL).
    const absolute = (u) => new URL(u, location.href).href;
    if (typeof machine === "string") machine = absolute(machine);
    const files = [...inputs];
    if (files.every((f) => typeof f === "string")) {
      out.push(await run(named(files.map(urlName)), files.map(absolute), machine, options));
      return out;
    }
    const imports = [];
    const columns = [];
    let config = null;
    for (const f of files) {
      const k = await kind(f);
      if (k === "import") imports.push(f);
      else if (k === "config") config = f;
      else if (k === "columns") columns.push(f);
      else {
        if (k === "machine") machine = [f.name, new Uint8Array(await f.arrayBuffer())];
        out.push(f);
      }
    }
    // A bundle opened with the columns file it names: the columns file is read in its place
    // (the same bundle); one written apart (another id) is left, and the bundle read.
    for (const c of columns) {
      const id = columnsId(heads.get(c));
      let i = -1;
      let named = null;
      for (i = 0; i < out.length; i++) {
        named = out[i] instanceof File ? namedColumns(heads.get(out[i])) : null;
        if (named && named.file === c.name) break;
      }
      if (i === out.length) out.push(c);
      else if (named.id === id) out[i] = c;
      else out.push(`${c.name} was not written with ${out[i].name} (its id differs): ${out[i].name} is read from its JSON`);
    }
    if (imports.length) {
      let groups;
      try {
        await loadImporter();
        groups = await rooflineImporter.groups(imports);
      } catch (e) {
        out.push(typeof e === "string" ? e : String((e && e.message) || e));
        return out;
      }
      for (const g of groups) {
        const inputs = g.map((i) => imports[i]);
        out.push(await run(named(inputs.map((f) => f.name)), inputs, machine, options, config));
      }
    } else if (config) {
      out.push(`${config.name} is a model configuration (--model-config): open it together with the torch.profiler trace it describes`);
    }
    return out;
  };
})();
