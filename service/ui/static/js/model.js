// Pictures of a calibrated model (docs/tables.md): each calibrator's output against its raw
// input and, for a lattice, the model's partial dependence along each input (the mean of the
// lattice's vertex values over the other inputs, at each vertex coordinate). A numeric input
// is drawn as a line, a categorical one as one bar per category.

import { barChart } from "./bars.js";
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

/** The categories a categorical lattice input places at coordinate `c`. */
function categoriesAt(feature, c) {
  const names = feature.categories.filter((_, i) => Math.round(feature.outputs[i]) === c);
  return names.length ? names.join(" / ") : `coordinate ${c}`;
}

function figure(title, chart) {
  return el("figure", {}, el("figcaption", { text: title }), chart);
}

function calibratorChart(feature, j, lattice) {
  const title = `${feature.column}: calibrator`;
  const yLabel = lattice ? "lattice coordinate" : "output";
  if (feature.kind !== "numeric") {
    return barChart({ name: `calibrator-${j}`, title, valueLabel: yLabel,
      bars: feature.categories.map((name, i) => [name, feature.outputs[i]]) });
  }
  return figure(title, lineChart({ name: `calibrator-${j}`, log: "never",
    title: `${feature.column}: calibrator output against the raw input`, xLabel: feature.column,
    yLabel, series: [{ label: feature.column,
      points: feature.keypoints.map((k, i) => [k, feature.outputs[i]]) }] }));
}

function partialChart(feature, j, values, sizes) {
  const title = `${feature.column}: partial dependence`;
  const means = partialDependence(values, sizes, j);
  if (feature.kind !== "numeric") {
    return barChart({ name: `partial-${j}`, title, valueLabel: "mean score",
      bars: means.map((v, c) => [categoriesAt(feature, c), v]) });
  }
  return figure(title, lineChart({ name: `partial-${j}`, log: "never",
    title: `${feature.column}: the model's partial dependence`, xLabel: feature.column,
    yLabel: "mean score", series: [{ label: feature.column,
      points: means.map((v, c) => [rawAt(feature, c), v]) }] }));
}

/** The sections drawing a Result's calibrated model; none for other models. */
export function modelSections(result) {
  const model = result.model;
  if (!model || !model.type.startsWith("calibrated_")) return [];
  const lattice = model.type === "calibrated_lattice";
  const sections = [el("h2", { text: "Calibrators" }), el("div", { class: "charts" },
    model.features.map((f, j) => calibratorChart(f, j, lattice)))];
  if (lattice) {
    const values = deployed(result);
    sections.push(el("h2", { text: "Partial dependence" }), el("div", { class: "charts" },
      model.features.map((f, j) => partialChart(f, j, values, model.sizes))));
  }
  return sections;
}
