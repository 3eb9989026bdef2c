// The batch progress view: every string from the kernel becomes a text node (no innerHTML anywhere).
const h = (tag, cls, text) => {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined) el.textContent = String(text);
  return el;
};
const money = (x) => `$${Number(x || 0).toFixed(4)}`;
let seq = 0;
function render({ model, el }) {
  const root = h("div", "anb-batch");
  const head = h("div", "anb-batch-head");
  const bar = h("div", "anb-batch-bar");
  const meter = h("div", "anb-batch-meter");
  const notice = h("div", "anb-batch-notice");
  const approvals = h("div", "anb-batch-approvals");
  const fails = h("div", "anb-batch-failures");
  const detail = h("div", "anb-batch-detail");
  const table = h("div", "anb-batch-result");
  const stop = h("button", "anb-batch-stop", "stop");
  stop.onclick = () => send({ type: "stop" });
  let sortKey = null;
  let sortUp = true;
  const opener = h("div", "anb-batch-opener");
  const which = h("input", "anb-batch-which");
  which.placeholder = "row label";
  const openBtn = h("button", "anb-batch-open-any", "open row");
  openBtn.onclick = () => which.value.trim() && send({ type: "open", label: which.value.trim() });
  opener.append(which, openBtn);
  // the opened row's run stands in a side panel beside the table (the table keeps its place while it is open)
  const main = h("div", "anb-batch-main");
  main.append(table, detail);
  root.append(head, bar, meter, notice, approvals, main, fails, opener);
  el.appendChild(root);
  const send = (msg) => model.send({ id: `b${++seq}`, ...msg });
  let received = Date.now();
  const meterText = () => {
    const c = model.get("counts") || {};
    const parts = [`${c.finished || 0}/${c.total || 0} rows`, `cost ${money(c.cost_usd)}`];
    if (c.max_cost_usd !== null && c.max_cost_usd !== undefined) parts[1] += ` of ${money(c.max_cost_usd)}`;
    parts.push(`${c.throughput || 0} rows/s`);
    if (c.slowest) {
      // the kernel sends the age at its last update; it keeps growing here between updates
      const age = c.slowest.seconds + (Date.now() - received) / 1000;
      parts.push(`slowest live row ${c.slowest.label} (${age.toFixed(1)} s)`);
    }
    const t = model.get("totals") || {};
    if (t.tokens) parts.push(`${t.tokens} tokens`);
    if (t.eta_s !== null && t.eta_s !== undefined) parts.push(`about ${t.eta_s} s and ${money(t.eta_cost_usd)} to finish`);
    meter.textContent = parts.join(" · ");
  };
  // the result table: one row per input row, filled in as rows finish; a header click sorts by that column
  const value = (r, key) => (key in r.fields ? r.fields[key] : r[key]);
  const drawTable = () => {
    const rows = [...(model.get("rows") || [])];
    const c = model.get("counts") || {};
    const fields = [];
    for (const r of rows) for (const k of Object.keys(r.fields || {})) if (!fields.includes(k)) fields.push(k);
    const cols = [["label", "row"], ["status", "status"], ...fields.map((f) => [f, f]), ["cost_usd", "cost"], ["input_tokens", "tokens in"], ["output_tokens", "tokens out"], ["seconds", "time"]];
    if (sortKey !== null) {
      rows.sort((a, b) => {
        const x = value(a, sortKey), y = value(b, sortKey);
        const cmp = x === y ? 0 : x === undefined || x === null ? 1 : y === undefined || y === null ? -1 : x < y ? -1 : 1;
        return sortUp ? cmp : -cmp;
      });
    }
    const grid = h("table", "anb-batch-grid anb-batch-rows");
    const tr0 = h("tr");
    for (const [key, label] of cols) {
      const th = h("th", "anb-batch-sort", label + (sortKey === key ? (sortUp ? " ▲" : " ▼") : ""));
      th.dataset.key = key;
      th.onclick = () => {
        sortUp = sortKey === key ? !sortUp : true;
        sortKey = key;
        drawTable();
      };
      tr0.appendChild(th);
    }
    grid.appendChild(tr0);
    for (const r of rows) {
      const tr = h("tr", `anb-batch-row anb-batch-${r.status}`);
      tr.dataset.label = r.label;
      if (r.error) tr.title = r.error;
      const open = h("button", "anb-batch-row-open", r.label);
      open.onclick = () => send({ type: "open", label: r.label });
      const first = h("td");
      first.appendChild(open);
      tr.append(first, h("td", "anb-batch-status", r.status));
      for (const f of fields) tr.appendChild(h("td", "", r.fields[f] === undefined || r.fields[f] === null ? "" : r.fields[f]));
      const has = r.cost_usd !== undefined;
      tr.append(h("td", "", has ? money(r.cost_usd) : ""), h("td", "", has ? r.input_tokens : ""), h("td", "", has ? r.output_tokens : ""), h("td", "", has ? `${r.seconds} s` : ""));
      grid.appendChild(tr);
    }
    stop.disabled = (c.running || 0) + (c.queued || 0) === 0;
    table.replaceChildren(grid, stop);
  };
  const draw = () => {
    const c = model.get("counts") || {};
    const total = c.total || 0;
    head.replaceChildren(
      h("span", "anb-batch-title", `batch on ${c.driver || ""}`),
      ...["done", "cached", "failed", "skipped", "running", "queued"].map((k) => {
        const s = h("span", `anb-batch-count anb-batch-${k}`, `${k} ${c[k] || 0}`);
        s.dataset.count = k;
        s.dataset.value = String(c[k] || 0);
        return s;
      }),
    );
    bar.replaceChildren();
    for (const k of ["done", "cached", "failed", "skipped"]) {
      const seg = h("div", `anb-batch-seg anb-batch-${k}`);
      seg.style.width = total ? `${(100 * (c[k] || 0)) / total}%` : "0";
      bar.appendChild(seg);
    }
    meterText();
    const busy = model.get("busy");
    notice.textContent = busy ? `${busy}…` : model.get("notice") || "";
    approvals.replaceChildren();
    for (const a of model.get("approvals_pending") || []) {
      const row = h("div", "anb-batch-approval");
      row.dataset.request = a.id;
      row.append(h("span", "anb-batch-label", `row ${a.label}`), h("span", "anb-batch-atitle", a.title));
      const btn = (label, action, cls) => {
        const b = h("button", cls, label);
        b.onclick = () => send({ type: "approval", request_id: a.id, action });
        return b;
      };
      row.append(btn("Approve", "approve", "anb-approve"), btn("Deny", "deny", "anb-deny"));
      if (a.tool) row.append(btn(`Approve all ${a.tool}`, "approve_tool", "anb-approve-tool"));
      approvals.appendChild(row);
    }
    fails.replaceChildren();
    const failures = model.get("failures") || [];
    if (failures.length) {
      const table = h("table", "anb-batch-table");
      const tr0 = h("tr");
      tr0.append(h("th", "", "row"), h("th", "", "error"));
      table.appendChild(tr0);
      for (const f of failures) {
        const tr = h("tr", "anb-batch-failure");
        const open = h("button", "anb-batch-open", f.label);
        open.onclick = () => send({ type: "open", label: f.label });
        const td = h("td");
        td.appendChild(open);
        tr.append(td, h("td", "anb-batch-error", f.error));
        table.appendChild(tr);
      }
      const retry = h("button", "anb-batch-retry", "retry failed rows");
      retry.disabled = Boolean(busy) || (c.running || 0) > 0;
      retry.onclick = () => send({ type: "retry" });
      fails.append(table, retry);
    }
    const d = model.get("detail") || {};
    detail.replaceChildren();
    main.classList.toggle("anb-batch-open", d.label !== undefined);
    if (d.label !== undefined) {
      const close = h("button", "anb-batch-close", "close");
      close.onclick = () => {
        detail.replaceChildren();
        main.classList.remove("anb-batch-open");
        send({ type: "close" });
      };
      const body = h("div", "anb-batch-dtext");
      // transcript, tool calls and approvals, one entry each (older views send the text alone)
      const entries = d.entries || [{ kind: "text", text: d.text }];
      for (const e of entries) body.appendChild(h("div", `anb-batch-dentry anb-batch-d-${e.kind}`, e.text));
      const top = h("div", "anb-batch-dtop");
      top.append(h("div", "anb-batch-dlabel", `run of row ${d.label}`), close);
      detail.append(top, body);
    }
  };
  const onCounts = () => {
    received = Date.now();
    draw();
  };
  const traits = ["failures", "approvals_pending", "detail", "notice", "busy", "totals"];
  for (const t of traits) model.on(`change:${t}`, draw);
  model.on("change:rows", drawTable);
  model.on("change:counts", onCounts);
  draw();
  drawTable();
  model.send({ type: "rendered" });
  const timer = setInterval(() => (model.get("counts") || {}).slowest && meterText(), 500);
  return () => {
    clearInterval(timer);
    for (const t of traits) model.off(`change:${t}`, draw);
    model.off("change:rows", drawTable);
    model.off("change:counts", onCounts);
  };
}
export default { render };
