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
  const opener = h("div", "anb-batch-opener");
  const which = h("input", "anb-batch-which");
  which.placeholder = "row label";
  const openBtn = h("button", "anb-batch-open-any", "open row");
  openBtn.onclick = () => which.value.trim() && send({ type: "open", label: which.value.trim() });
  opener.append(which, openBtn);
  root.append(head, bar, meter, notice, approvals, fails, opener, detail);
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
    meter.textContent = parts.join(" · ");
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
    if (d.label !== undefined) {
      const close = h("button", "anb-batch-close", "close");
      close.onclick = () => detail.replaceChildren();
      detail.append(h("div", "anb-batch-dlabel", `run of row ${d.label}`), close, h("pre", "anb-batch-dtext", d.text));
    }
  };
  const onCounts = () => {
    received = Date.now();
    draw();
  };
  const traits = ["failures", "approvals_pending", "detail", "notice", "busy"];
  for (const t of traits) model.on(`change:${t}`, draw);
  model.on("change:counts", onCounts);
  draw();
  model.send({ type: "rendered" });
  const timer = setInterval(() => (model.get("counts") || {}).slowest && meterText(), 500);
  return () => {
    clearInterval(timer);
    for (const t of traits) model.off(`change:${t}`, draw);
    model.off("change:counts", onCounts);
  };
}
export default { render };
