// Pictures of a calibrated model (docs/tables.md): each calibrator's output against its raw
// input and, for a lattice, the model's partial dependence along each input (the mean of the
// lattice's vertex values over the other inputs, at each vertex coordinate).

import { lineChart } from "./chart.js";
import { el } from "./dom.js";

/** The solution the Result recommends: the projected mean, else the mean. */
function deployed(result) {
  return (result.projected || result.mean).solution;
}

/** The raw value of a lattice input at coordinate `c` (its keypoints interpolated). */
function rawAt(feature, c) {
  const [coords, keys] = [feature.outputs, feature.keypoints];
  const k = Math.min(Math.max(coords.findIndex((v) => v >= c), 1), coords.length - 1);
  const t = (c - coords[k - 1]) / (coords[k] - coords[k - 1]);
  return keys[k - 1] + t * (keys[k] - keys[k - 1]);
}

/** Mean vertex value at each coordinate of `axis` (values in C order over `sizes`). */
function partialDependence(values, sizes, axis) {
  const stride = sizes.slice(axis + 1).reduce((a, b) => a * b, 1);
  const sums = new Array(sizes[axis]).fill(0);
  values.forEach((v, i) => { sums[Math.floor(i / stride) % sizes[axis]] += v; });
  const others = values.length / sizes[axis];
  return sums.map((s) => s / others);
}

function calibratorChart(feature, j, lattice) {
  const numeric = feature.kind === "numeric";
  const points = numeric ? feature.keypoints.map((k, i) => [k, feature.outputs[i]])
    : feature.outputs.map((o, i) => [i, o]);
  return lineChart({ name: `calibrator-${j}`, log: "never",
    title: `${feature.column}: calibrator output against the raw input`,
    xLabel: numeric ? feature.column : `${feature.column}: ${feature.categories.join(", ")}`,
    yLabel: lattice ? "lattice coordinate" : "output",
    series: [{ label: feature.column, points }] });
}

/** A categorical lattice input's categories from coordinate 0 up. */
function byCoordinate(feature) {
  const placed = feature.categories.map((name, i) => [feature.outputs[i], name]);
  return placed.sort((a, b) => a[0] - b[0]).map(([, name]) => name);
}

function partialChart(feature, j, values, sizes) {
  const numeric = feature.kind === "numeric";
  const points = partialDependence(values, sizes, j)
    .map((v, c) => [numeric ? rawAt(feature, c) : c, v]);
  return lineChart({ name: `partial-${j}`, log: "never",
    title: `${feature.column}: the model's partial dependence`,
    xLabel: numeric ? feature.column : `${feature.column}: ${byCoordinate(feature).join(", ")}`,
    yLabel: "mean score", series: [{ label: feature.column, points }] });
}

/** The sections drawing a Result's calibrated model; none for other models. */
export function modelSections(result) {
  const model = result.model;
  if (!model || !model.type.startsWith("calibrated_")) return [];
  const lattice = model.type === "calibrated_lattice";
  const sections = [el("h3", { text: "Calibrators" }), el("div", { class: "charts" },
    model.features.map((f, j) => calibratorChart(f, j, lattice)))];
  if (lattice) {
    const values = deployed(result);
    sections.push(el("h3", { text: "Partial dependence" }), el("div", { class: "charts" },
      model.features.map((f, j) => partialChart(f, j, values, model.sizes))));
  }
  return sections;
}
