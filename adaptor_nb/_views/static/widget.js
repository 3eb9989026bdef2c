const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;" };
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ESC[c]);
const SAFE_URL = /^https?:\/\/[^\s]+$/i;
const PREVIEW = 1200;
const PREVIEW_LINES = 12;
function inline(raw) {
const codes = [];
let s = esc(raw).replace(/`([^`\n]+)`/g, (_, c) => {
codes.push(c);
return `\u0000${codes.length - 1}\u0000`;
});
s = s.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (_, label, url) =>
SAFE_URL.test(url) ? `<a href="${url}" target="_blank" rel="noopener noreferrer nofollow">${label}</a>` : label,
);
s = s.replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>");
s = s.replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, "$1<em>$2</em>");
return s.replace(/\u0000(\d+)\u0000/g, (_, i) => `<code>${codes[Number(i)]}</code>`);
}
export function markdown(src) {
const lines = String(src ?? "").replace(/\u0000/g, "").split("\n");
const out = [];
let para = [];
let list = null;
const flush = () => {
if (para.length) out.push(`<p>${para.map(inline).join("<br>")}</p>`);
para = [];
if (list) out.push(`<${list.tag}>${list.items.map((x) => `<li>${inline(x)}</li>`).join("")}</${list.tag}>`);
list = null;
};
const item = (tag, text) => {
if (para.length || (list && list.tag !== tag)) flush();
list = list || { tag, items: [] };
list.items.push(text);
};
for (let i = 0; i < lines.length; i++) {
const line = lines[i];
let m = line.match(/^\s*(```|~~~)/);
if (m) {
flush();
const body = [];
for (i++; i < lines.length && !lines[i].trim().startsWith(m[1]); i++) body.push(lines[i]);
out.push(`<pre><code>${esc(body.join("\n"))}</code></pre>`);
} else if ((m = line.match(/^(#{1,6})\s+(.*)$/))) {
flush();
out.push(`<h${m[1].length}>${inline(m[2])}</h${m[1].length}>`);
} else if ((m = line.match(/^\s*[-*+]\s+(.*)$/))) {
item("ul", m[1]);
} else if ((m = line.match(/^\s*\d+[.)]\s+(.*)$/))) {
item("ol", m[1]);
} else if ((m = line.match(/^>\s?(.*)$/))) {
flush();
out.push(`<blockquote>${inline(m[1])}</blockquote>`);
} else if (!line.trim()) {
flush();
} else {
if (list) flush();
para.push(line);
}
}
flush();
return out.join("");
}
function h(tag, props, ...kids) {
const el = document.createElement(tag);
for (const [k, v] of Object.entries(props || {})) {
if (v === undefined || v === null || v === false) continue;
if (k === "class") el.className = v;
else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
else if (k === "text") el.textContent = String(v);
else el.setAttribute(k, v === true ? "" : String(v));
}
for (const kid of kids.flat()) if (kid !== null && kid !== undefined && kid !== false) el.append(kid);
return el;
}
const uid = () => `w${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
const secs = (ms) =>
ms < 1000
? `${Math.max(1, Math.round(ms))} ms`
: ms < 60000
? `${(ms / 1000).toFixed(1)} s`
: `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const TOOL_STATES = { running: "running", waiting: "waiting for approval", done: "done", error: "failed", denied: "denied" };
const WHEN = [["soon", "Soon"], ["after_turn", "After turn"], ["interrupt", "Interrupt"]];
function fold(view, id, summary, ...body) {
const d = h("details", { class: "anb-fold", open: view.open.has(id) }, h("summary", {}, summary), ...body);
d.addEventListener("toggle", () => (d.open ? view.open.add(id) : view.open.delete(id)));
return d;
}
function longText(view, id, text, cls) {
const full = String(text ?? "");
const cut = Math.min(PREVIEW, full.split("\n").slice(0, PREVIEW_LINES).join("\n").length);
if (cut >= full.length || view.expanded.has(id)) return h("pre", { class: cls, text: full });
const pre = h("pre", { class: cls, text: `${full.slice(0, cut)}\n…` });
const more = h("button", {
class: "anb-more",
text: `show all (${full.length} characters)`,
onclick: () => {
view.expanded.add(id);
pre.textContent = full;
more.remove();
},
});
return h("div", {}, pre, more);
}
function diffBlock(diff) {
return h(
"pre",
{ class: "anb-diff" },
String(diff).split("\n").map((l) =>
h("span", { class: l.startsWith("+") ? "anb-add" : l.startsWith("-") ? "anb-del" : "", text: `${l}\n` }),
),
);
}
function approvalCard(view, it) {
const card = h("div", { class: `anb-card anb-approval anb-${it.state}`, "data-request": it.request_id });
card.append(
h("div", { class: "anb-card-head" },
h("span", { class: "anb-badge", text: String(it.akind || "permission").replace("_", " ") }),
h("span", { class: "anb-title", text: it.title || "Approval requested" })),
);
if (it.tool) card.append(h("div", { class: "anb-tool-name", text: `tool: ${it.tool}` }));
if (it.args) card.append(longText(view, `${it.id}:a`, it.args, "anb-args"));
if (it.diff) card.append(diffBlock(it.diff));
if (it.state !== "pending") {
card.append(h("div", { class: "anb-outcome", text: it.outcome || it.state }));
return card;
}
const status = h("span", { class: "anb-status", text: it.error || "" });
const buttons = [];
const act = (action, extra) => {
for (const b of buttons) b.disabled = true;
status.textContent = "sending…";
view.model.send({ type: "approval", id: uid(), request_id: it.request_id, action, ...extra });
};
const reason = h("input", { class: "anb-reason", type: "text", placeholder: "reason (optional)" });
const row = h("div", { class: "anb-actions" });
if (it.akind === "question") {
for (const c of it.choices || []) {
const b = h("button", { class: "anb-choice", title: c.description || "", text: c.label || c.key, onclick: () => act("answer", { answer: c.key }) });
buttons.push(b);
row.append(b);
}
const free = h("input", { class: "anb-answer", type: "text", placeholder: "answer" });
const b = h("button", { class: "anb-answer-btn", text: "Answer", onclick: () => act("answer", { answer: free.value }) });
buttons.push(b);
row.append(free, b);
} else {
const b = h("button", { class: "anb-approve", text: "Approve", onclick: () => act("approve", {}) });
buttons.push(b);
row.append(b);
}
const deny = h("button", { class: "anb-deny", text: "Deny", onclick: () => act("deny", { reason: reason.value }) });
buttons.push(deny);
row.append(deny, reason);
card.append(row);
if (it.deadline_ms) card.append(h("div", { class: "anb-deadline", "data-deadline": it.deadline_ms }));
else if (it.wait && it.state === "pending") card.append(h("div", { class: "anb-deadline anb-wait", text: it.wait }));
card.append(status);
return card;
}
function renderItem(view, it, live) {
const text = live ?? it.text ?? "";
switch (it.kind) {
case "text": {
const el = h("div", { class: `anb-text${it.role === "user" ? " anb-user" : ""}` });
el.innerHTML = markdown(text); // markdown() escapes every character of agent text first
return el;
}
case "thinking":
return fold(view, it.id, h("span", { class: "anb-muted", text: "Thinking" }), h("div", { class: "anb-thinking", text }));
case "tool": {
const head = h("span", {},
h("span", { class: `anb-dot anb-${it.state}` }),
it.host_tool ? h("span", { class: "anb-muted", text: "python " }) : null,
h("code", { text: it.name || "tool" }),
h("span", { class: `anb-tool-state anb-${it.state}`, text: ` ${TOOL_STATES[it.state] || it.state}${it.summary ? ` · ${it.summary}` : ""}` }));
const body = [h("div", { class: "anb-label", text: "arguments" }), longText(view, `${it.id}:a`, text, "anb-args")];
if (it.result !== undefined && it.result !== null && it.result !== "")
body.push(h("div", { class: "anb-label", text: it.state === "error" ? "error" : "result" }), longText(view, `${it.id}:r`, it.result, "anb-result"));
if (it.truncated) body.push(h("div", { class: "anb-muted", text: `(${it.truncated} more characters not kept)` }));
return h("div", { class: "anb-card anb-tool" }, fold(view, it.id, head, ...body));
}
case "subagent":
return h("div", { class: "anb-card anb-sub" },
fold(view, it.id, h("span", {}, h("span", { class: "anb-badge", text: "subagent" }), ` ${it.member || it.task || ""} · ${it.state || ""}`),
it.summary ? h("div", { text: it.summary }) : null, text ? h("pre", { class: "anb-args", text }) : null));
case "plan": {
const steps = (it.entries || []).map((e) =>
h("li", { class: `anb-step anb-${e.status}`, "data-status": e.status },
h("span", { class: "anb-mark", text: `${e.mark} ` }), h("span", { class: "anb-step-text", text: e.text })));
return h("div", { class: "anb-card anb-plan", "data-revision": it.revision },
h("div", {}, h("span", { class: "anb-badge", text: "plan" }),
h("span", { class: "anb-muted", text: `${it.done} of ${steps.length} done` })),
it.explanation ? h("div", { class: "anb-muted", text: it.explanation }) : null,
h("ul", { class: "anb-checklist" }, steps));
}
case "notice":
return h("div", { class: `anb-notice anb-${it.level || "info"}`, text: text });
case "approval":
return approvalCard(view, it);
case "message":
return sentItem(it);
default:
return h("div", { class: "anb-muted", text: `${it.kind}: ${text}` });
}
}
function messageRow(m) {
return h("li", { class: `anb-msg anb-${m.state}`, "data-id": m.id },
h("span", { class: "anb-msg-text", text: m.text }),
h("span", { class: "anb-msg-state", text: ` ${m.words || m.state}` }));
}
function sentItem(it) {
return h("div", { class: `anb-msg anb-sent anb-${it.state}`, "data-id": it.message_id },
h("span", { class: "anb-sent-by", text: "you sent " }),
h("span", { class: "anb-msg-text", text: it.text || "a message" }),
h("span", { class: "anb-msg-state", text: ` ${it.words || it.state}` }));
}
function render({ model, el }) {
const view = { model, open: new Set(), expanded: new Set(), cache: new Map(), skew: 0, live: { ...(model.get("live") || {}) } };
const head = h("div", { class: "anb-head" });
const note = h("div", { class: "anb-note" });
const items = h("div", { class: "anb-items" });
const error = h("div", { class: "anb-failure" });
const msgList = h("ul", { class: "anb-msgs" });
const input = h("textarea", { class: "anb-input", rows: 2, placeholder: "Send a message to the running agent" });
const when = h("select", { class: "anb-when" }, WHEN.map(([v, l]) => h("option", { value: v, text: l })));
const send = h("button", {
class: "anb-send",
text: "Send",
onclick: () => {
const text = input.value.trim();
if (!text) return;
model.send({ type: "message", id: uid(), text, when: when.value });
input.value = "";
},
});
const box = h("div", { class: "anb-box" }, input, h("div", { class: "anb-box-row" }, when, send));
const foot = h("div", { class: "anb-foot" });
const root = h("div", { class: "anb" }, head, note, items, error, msgList, box, foot);
el.append(root);
const tick = () => {
const now = Date.now() - view.skew;
const hd = model.get("header") || {};
const span = head.querySelector(".anb-elapsed");
if (span && hd.started_ms) span.textContent = secs((hd.ended_ms || now) - hd.started_ms);
for (const d of root.querySelectorAll("[data-deadline]")) {
const left = Math.max(0, Number(d.dataset.deadline) - now);
d.textContent = left > 0 ? `expires in ${Math.ceil(left / 1000)} s` : "deadline passed";
}
};
const draw = () => {
view.skew = Date.now() - (model.get("server_ms") || Date.now());
const hd = model.get("header") || {};
head.replaceChildren(
...[
h("span", { class: "anb-driver", text: hd.driver || "" }),
hd.model ? h("span", { class: "anb-model", text: `model ${hd.model}` }) : null,
hd.thread ? h("span", { class: "anb-thread", text: `thread ${hd.thread}` }) : null,
hd.workspace ? h("span", { class: "anb-workspace", text: `worktree ${hd.workspace}${hd.branch ? ` (branch ${hd.branch})` : ""}` }) : null,
h("span", { class: `anb-state anb-${hd.state}`, text: hd.state || "" }),
h("span", { class: "anb-elapsed" }),
].filter(Boolean),
);
note.textContent = hd.note || "";
note.hidden = !hd.note;
error.textContent = hd.error || "";
error.hidden = !hd.error;
const live = view.live;
const list = model.get("items") || [];
const seen = new Set();
let prev = null;
for (const it of list) {
seen.add(it.id);
const sig = JSON.stringify(it) + (live[it.id] ?? "");
let entry = view.cache.get(it.id);
if (!entry || entry.sig !== sig) {
const fresh = renderItem(view, it, live[it.id]);
if (entry) entry.el.replaceWith(fresh);
entry = { sig, el: fresh };
view.cache.set(it.id, entry);
}
if (entry.el.previousElementSibling !== prev || entry.el.parentNode !== items) {
if (prev) prev.after(entry.el);
else items.prepend(entry.el);
}
prev = entry.el;
}
for (const [id, entry] of view.cache) if (!seen.has(id)) (entry.el.remove(), view.cache.delete(id));
msgList.replaceChildren(...(model.get("messages") || []).filter((m) => !m.placed).map(messageRow));
const accepting = Boolean(model.get("accepting"));
box.hidden = !accepting; // folds away when the run ends
for (const c of [input, when, send]) c.disabled = !accepting;
const ft = model.get("footer") || {};
const parts = [];
if (ft.status) parts.push(ft.status);
if (ft.turns) parts.push(plural(ft.turns, "turn"));
if (ft.input_tokens !== undefined) parts.push(`${ft.input_tokens || 0} in / ${ft.output_tokens || 0} out tokens`);
if (ft.cost_usd) parts.push(`$${Number(ft.cost_usd).toFixed(4)}`);
if (ft.duration !== undefined) parts.push(secs(ft.duration * 1000));
foot.textContent = parts.join(" · ");
tick();
};
let pending = false;
const schedule = () => {
if (pending) return;
pending = true;
requestAnimationFrame(() => {
pending = false;
draw();
});
};
const onLive = () => {
view.live = { ...(model.get("live") || {}) };
schedule();
};
const onCustom = (msg) => {
if (!msg || msg.type !== "append") return;
for (const [id, [offset, text]] of Object.entries(msg.items || {})) {
const have = view.live[id] ?? "";
if (have.length === offset) view.live[id] = have + text; // otherwise wait for the next full sync
}
schedule();
};
const events = ["header", "items", "messages", "footer", "accepting", "server_ms"].map((k) => `change:${k}`);
for (const ev of events) model.on(ev, schedule);
model.on("change:live", onLive);
model.on("msg:custom", onCustom);
draw();
model.send({ type: "rendered" });
const timer = setInterval(tick, 500);
return () => {
clearInterval(timer);
for (const ev of events) model.off(ev, schedule);
model.off("change:live", onLive);
model.off("msg:custom", onCustom);
};
}
export default { render };
