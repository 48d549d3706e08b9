// Horizontal bar charts in HTML: one labelled bar per category, measured from zero, with its
// value beside it. Labels wrap instead of being cut, at any width.

import { el, num } from "./dom.js";

/** The bar of `value` on a track spanning [low, high] (positions set through the CSSOM). */
function track(value, low, high) {
  const at = (v) => (100 * (v - low)) / (high - low || 1);
  const fill = el("span", { class: `fill ${value < 0 ? "negative" : "positive"}` });
  fill.style.left = `${at(Math.min(value, 0))}%`;
  fill.style.width = `${Math.max(at(Math.max(value, 0)) - at(Math.min(value, 0)), 0.5)}%`;
  const zero = el("span", { class: "zero" });
  zero.style.left = `${at(0)}%`;
  return el("span", { class: "track", "aria-hidden": "true" }, fill, zero);
}

/**
 * A bar chart.
 * @param {Object} spec
 * @param {string} spec.name - data-chart attribute (tests find the chart by it)
 * @param {string} spec.title - its caption
 * @param {string} spec.valueLabel - what the values are (said under the caption)
 * @param {Array<[string, number]>} spec.bars - (label, value) pairs, drawn in this order
 * @returns {HTMLElement} a figure with data-points = the number of bars
 */
export function barChart({ name, title, valueLabel, bars }) {
  const values = bars.map(([, value]) => value);
  const [low, high] = [Math.min(0, ...values), Math.max(0, ...values)];
  return el("figure", { class: "bar-chart", "data-chart": name, "data-points": bars.length },
    el("figcaption", { text: title }),
    el("p", { class: "muted", text: `${valueLabel} per category (the thin line is 0)` }),
    el("ol", { class: "bars", "aria-label": title }, bars.map(([label, value]) =>
      el("li", {}, el("span", { class: "bar-label", text: label }), track(value, low, high),
        el("span", { class: "bar-value", text: num(value) })))));
}
