// A sweep's front: objective and error against the swept value, on training and validation
// data, drawn with uPlot (vendor/uplot); each point links to its model below the chart.

import uPlot from "../vendor/uplot/uPlot.esm.js";
import { constraintsSection } from "./report.js";
import { el, num, table } from "./dom.js";

const SERIES = [
  ["objective", "training objective", "#1f6feb"],
  ["validation_objective", "validation objective", "#8250df"],
  ["error", "training error", "#1a7f37"],
  ["validation_error", "validation error", "#cf222e"],
];

/** The front's chart (numeric values only) and a table linking every point to its model. */
export function frontSection(sweep) {
  const front = sweep.front;
  const numeric = front.every((p) => typeof p.value === "number");
  const shown = SERIES.filter(([key]) => front.some((p) => p[key] !== null));
  const chart = el("div", { class: "front-chart", role: "img",
    "aria-label": `front against ${sweep.path}` });
  const section = el("section", { class: "front", "aria-label": "Front" },
    el("h2", { text: `Front: ${sweep.path}` }), numeric ? chart : null,
    table(`${front.length} point(s); each links to its model`,
      ["value", ...shown.map(([, name]) => name), "max violation", "model"],
      front.map((p, k) => [num(p.value), ...shown.map(([key]) => num(p[key])),
        num(p.max_violation), el("a", { href: `#point-${k}`, class: "point-link",
          onclick: (event) => { event.preventDefault(); open(k); } }, `point ${k}`)])),
    sweep.points.map((point, k) => el("details", { id: `point-${k}`, class: "point" },
      el("summary", { text: `point ${k}: ${sweep.path} = ${num(point.value)}` }),
      constraintsSection(point.result))));
  if (numeric) draw(chart, front, shown);
  return section;

  function open(k) {
    const details = section.querySelector(`#point-${k}`);
    details.open = true;
    details.scrollIntoView();
  }
}

function draw(node, front, shown) {
  const order = front.map((_, k) => k).sort((a, b) => front[a].value - front[b].value);
  const data = [order.map((k) => front[k].value),
    ...shown.map(([key]) => order.map((k) => front[k][key]))];
  const options = {
    width: 640, height: 300,
    scales: { x: { time: false } },
    series: [{ label: "value" }, ...shown.map(([, label, stroke]) => ({
      label, stroke, width: 2, points: { show: true, size: 7 } }))],
    axes: [{ label: "swept value" }, { label: "objective / error" }],
  };
  // the chart measures its container, so draw once it is in the document, at its width
  requestAnimationFrame(() => {
    const plot = new uPlot({ ...options, width: node.clientWidth || options.width }, data, node);
    const resizes = new ResizeObserver(() => {
      if (!node.isConnected) resizes.disconnect();
      else if (node.clientWidth && node.clientWidth !== plot.width) {
        plot.setSize({ width: node.clientWidth, height: options.height });
      }
    });
    resizes.observe(node);
  });
}
