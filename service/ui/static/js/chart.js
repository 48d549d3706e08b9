// Line charts drawn as SVG: linear or log-10 y axis, any number of series. A chart is drawn
// at its on-screen width (redrawn when that changes), so its text keeps its size on a phone.

import { el, num } from "./dom.js";

const WIDTH = 640;
const HEIGHT = 240;
const MARGIN = { left: 64, right: 28, top: 10, bottom: 36 };
const NARROWEST = 240;

const specs = new WeakMap();
const resizes = new ResizeObserver((entries) => {
  for (const { target, contentRect } of entries) {
    if (!target.isConnected) resizes.unobserve(target);
    else if (contentRect.width > 0
      && Math.round(contentRect.width) !== Number(target.dataset.width)) {
      draw(target, specs.get(target), contentRect.width);
    }
  }
});

/**
 * A round step giving about `count` ticks over [low, high]. A span within rounding of the
 * values (a value summed in two orders) is taken as none: steps of 1e-16 over 5.485 would
 * never advance a tick.
 */
function roundStep(low, high, count = 5) {
  const negligible = high - low <= 1e-9 * Math.max(Math.abs(low), Math.abs(high));
  const raw = ((negligible ? 0 : high - low) || Math.abs(high) || 1) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
}

/** The multiples of `step` in [low, high]. */
function multiples(low, high, step) {
  const ticks = [];
  for (let k = Math.ceil(low / step - 1e-9); k * step <= high + step * 1e-9; k += 1) {
    ticks.push(k * step + 0);   // + 0 turns -0 into 0
  }
  return ticks;
}

/** About `count` round ticks in [low, high], at least three where a round step gives them. */
function axisTicks(low, high, count) {
  let ticks = [];
  for (let more = count; ticks.length < 3 && more <= 4 * count; more += 1) {
    ticks = multiples(low, high, roundStep(low, high, more));
  }
  return ticks;
}

/** Powers of ten covering [low, high] (both > 0), thinned to about six. */
function logTicks(low, high) {
  const first = Math.floor(Math.log10(low));
  const last = Math.ceil(Math.log10(high));
  const every = Math.max(1, Math.ceil((last - first) / 6));
  const ticks = [];
  for (let p = first; p <= last; p += every) ticks.push(10 ** p);
  return ticks;
}

/**
 * The y scale of `values`: log-10 when `log` is "always" (values <= 0 sit on the floor) or
 * "positive" and every value is positive; linear otherwise.
 */
function yScale(values, log) {
  const positive = values.filter((v) => v > 0);
  const useLog = positive.length && (log === "always"
    || (log === "positive" && positive.length === values.length));
  if (useLog) {
    let low = Math.min(...positive);
    let high = Math.max(...positive);
    if (low === high) { low /= 10; high *= 10; }
    const floor = 10 ** Math.floor(Math.log10(low));
    const top = 10 ** Math.ceil(Math.log10(high));
    return { log: true, low: floor, high: top, ticks: logTicks(floor, top),
      map: (v) => Math.log10(Math.max(v, floor)) };
  }
  let low = Math.min(...values);
  let high = Math.max(...values);
  if (low === high) { low -= 1; high += 1; }
  const step = roundStep(low, high);
  const [bottom, top] = [Math.floor(low / step) * step, Math.ceil(high / step) * step];
  return { log: false, low: bottom, high: top, ticks: multiples(bottom, top, step),
    map: (v) => v };
}

/**
 * A line chart, redrawn at its width whenever that changes.
 * @param {Object} spec
 * @param {string} spec.name - data-chart attribute (tests and styles find the chart by it)
 * @param {string} spec.title - accessible title
 * @param {string} spec.xLabel
 * @param {string} spec.yLabel
 * @param {string} spec.log - "always" (values <= 0 on the floor), "positive" (log-10 when
 *   every value is positive) or "never"
 * @param {boolean} [spec.fromZero] - the x axis starts at 0 (else at the smallest x)
 * @param {Array<{label: string, points: Array<[number, number]>}>} spec.series
 * @returns {SVGElement} with data-points = the number of points drawn
 */
export function lineChart(spec) {
  const svg = el("svg:svg", { class: "chart", role: "img", "data-chart": spec.name });
  specs.set(svg, spec);
  draw(svg, spec, WIDTH);
  resizes.observe(svg);
  return svg;
}

/** Draw `svg` (a lineChart) again with a new spec, at its current width. */
export function redraw(svg, spec) {
  specs.set(svg, spec);
  draw(svg, spec, Number(svg.dataset.width) || WIDTH);
}

function draw(svg, { title, xLabel, yLabel, log, series, fromZero }, available) {
  const width = Math.max(Math.round(available), NARROWEST);
  svg.dataset.width = Math.round(available);
  const points = series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x)
    && Number.isFinite(y));
  svg.setAttribute("viewBox", `0 0 ${width} ${HEIGHT}`);
  svg.setAttribute("data-points", points.length);
  svg.setAttribute("aria-label", title);
  svg.replaceChildren(el("svg:title", { text: title }));
  const inner = { w: width - MARGIN.left - MARGIN.right, h: HEIGHT - MARGIN.top - MARGIN.bottom };
  if (!points.length) {
    svg.append(el("svg:text", { x: width / 2, y: HEIGHT / 2, class: "empty",
      "text-anchor": "middle", text: "no points yet" }));
    return;
  }
  const xs = points.map(([x]) => x);
  const x = { low: Math.min(...(fromZero ? [0] : []), ...xs), high: Math.max(...xs) };
  if (x.high === x.low) x.high = x.low + 1;
  const y = yScale(points.map(([, v]) => v), log);
  const [yLow, yHigh] = [y.map(y.low), y.map(y.high)];
  const px = (v) => MARGIN.left + ((v - x.low) / (x.high - x.low)) * inner.w;
  const py = (v) => MARGIN.top + inner.h - ((y.map(v) - yLow) / (yHigh - yLow || 1)) * inner.h;

  const axes = el("svg:g", { class: "axes" });
  for (const tick of y.ticks) {
    axes.append(el("svg:line", { x1: MARGIN.left, x2: width - MARGIN.right, y1: py(tick),
      y2: py(tick), class: "grid" }));
    axes.append(el("svg:text", { x: MARGIN.left - 6, y: py(tick) + 4, "text-anchor": "end",
      text: y.log ? `1e${Math.round(Math.log10(tick))}` : num(tick) }));
  }
  for (const tick of axisTicks(x.low, x.high, Math.max(3, Math.floor(inner.w / 90)))) {
    axes.append(el("svg:text", { x: px(tick), y: HEIGHT - MARGIN.bottom + 16,
      "text-anchor": "middle", text: num(tick) }));
  }
  axes.append(el("svg:rect", { x: MARGIN.left, y: MARGIN.top, width: inner.w, height: inner.h,
    class: "frame" }));
  axes.append(el("svg:text", { x: MARGIN.left + inner.w / 2, y: HEIGHT - 4,
    "text-anchor": "middle", class: "label", text: xLabel }));
  axes.append(el("svg:text", { x: 12, y: MARGIN.top + inner.h / 2, class: "label",
    "text-anchor": "middle", transform: `rotate(-90 12 ${MARGIN.top + inner.h / 2})`,
    text: y.log ? `${yLabel} (log)` : yLabel }));
  svg.append(axes);

  series.forEach((s, k) => {
    const drawn = s.points.filter(([px_, py_]) => Number.isFinite(px_) && Number.isFinite(py_));
    if (!drawn.length) return;
    const d = drawn.map(([u, v], i) => `${i ? "L" : "M"}${px(u).toFixed(1)},${py(v).toFixed(1)}`)
      .join("");
    svg.append(el("svg:path", { d, class: `line series-${k % 8}` }));
    if (drawn.length === 1) {
      svg.append(el("svg:circle", { cx: px(drawn[0][0]), cy: py(drawn[0][1]), r: 3,
        class: `dot series-${k % 8}` }));
    }
  });
}

/** A legend naming each series in its color. */
export function legend(labels) {
  return el("ul", { class: "legend" }, labels.map((label, k) =>
    el("li", {}, el("span", { class: `swatch series-${k % 8}`, "aria-hidden": "true" }), label)));
}
