"""WCAG contrast of every visible text in the run views of a page, against its effective background."""

from __future__ import annotations

from typing import Any

AA = 4.5
"""WCAG 2 level AA for normal text."""

# For each visible, enabled text node under the selector's elements: its colour (with the opacity of its ancestors)
# stack of backgrounds behind it, and the contrast ratio of the two. Handles rgb()/rgba() and the color(srgb ...)
# form that Chromium reports for color-mix().
MEASURE = """(selector) => {
  const parse = (c) => {
    let m = c.match(/^rgba?\\(([^)]+)\\)$/);
    if (m) {
      const p = m[1].split(/[\\s,/]+/).filter(Boolean).map(Number);
      return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
    }
    m = c.match(/^color\\(srgb\\s+([^)]+)\\)$/);
    if (m) {
      const [rgb, a] = m[1].split("/");
      const p = rgb.trim().split(/\\s+/).map(Number);
      return [p[0] * 255, p[1] * 255, p[2] * 255, a === undefined ? 1 : Number(a)];
    }
    throw new Error(`unparsed colour ${c}`);
  };
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let bg = [255, 255, 255, 1];
    for (const layer of layers.reverse()) bg = over(layer, bg);
    return bg;
  };
  const lum = (c) => {
    const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const out = [];
  for (const root of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = n.textContent.trim();
      const el = n.parentElement;
      if (!text || !el.getClientRects().length) continue;
      const st = getComputedStyle(el);
      if (st.visibility === "hidden" || el.closest("option, :disabled")) continue; // WCAG exempts inactive controls
      let opacity = 1;
      for (let e = el; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
      const bg = background(el);
      const c = parse(st.color);
      const fg = over([c[0], c[1], c[2], c[3] * opacity], bg);
      const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
      out.push({ text: text.slice(0, 50), cls: String(el.className), ratio: (hi + 0.05) / (lo + 0.05),
                 fg: fg.slice(0, 3).map(Math.round), bg: bg.slice(0, 3).map(Math.round) });
    }
  }
  return out;
}"""


def measure(page: Any, selector: str = ".anb") -> list[dict[str, Any]]:
    """Every visible text under ``selector`` (the live run views by default) with its contrast ratio."""
    found: list[dict[str, Any]] = page.evaluate(MEASURE, selector)
    return found


def too_low(found: list[dict[str, Any]]) -> list[str]:
    """The texts below AA, described for an assertion message."""
    return [
        f"{f['ratio']:.2f}:1 {f['text']!r} (.{f['cls']}) fg {f['fg']} on bg {f['bg']}" for f in found if f["ratio"] < AA
    ]
