// Convergence charts of one or more runs: objective and max violation against iteration or
// solver time, from the jobs' progress events; a finished run's Result is a dot at its end.

import { legend, lineChart } from "./chart.js";
import { el, show } from "./dom.js";

const AXES = {
  iteration: { label: "iteration", of: (p) => p.iteration },
  time: { label: "solver time (s)", of: (p) => p.elapsed_s },
};

let instances = 0;

/** Charts that redraw (at most once per frame) when runs gain progress reports. */
export class Convergence {
  /** @param {string[]} labels - one per run */
  constructor(labels) {
    this.runs = labels.map((label) => ({ label, progress: [] }));
    this.axis = "iteration";
    this.pending = false;
    this.charts = el("div", { class: "charts" });
    const group = `x-axis-${++instances}`;
    const choice = (value) => el("label", {}, el("input", { type: "radio", name: group, value,
      checked: value === this.axis, onchange: () => { this.axis = value; this.draw(); } }),
    ` ${AXES[value].label}`);
    this.node = el("section", { class: "convergence", "aria-label": "Convergence" },
      el("fieldset", { class: "axis" }, el("legend", { text: "Horizontal axis" }),
        choice("iteration"), choice("time")),
      this.charts,
      labels.length > 1 ? legend(labels) : null);
    this.draw();
  }

  /** Add a progress report (an event's data) to run `index`. */
  add(index, progress) {
    this.runs[index].progress.push(progress);
    if (!this.pending) {
      this.pending = true;
      requestAnimationFrame(() => { this.pending = false; this.draw(); });
    }
  }

  /** Mark run `index` finished: its Result's summary is drawn as a dot after its last
   * report (the mixture's expected figures, where the run's line is the running average). */
  finish(index, summary) {
    this.runs[index].summary = summary;
    this.draw();
  }

  /** The number of progress reports of run `index`. */
  count(index) {
    return this.runs[index].progress.length;
  }

  draw() {
    const x = AXES[this.axis];
    const results = (field) => this.runs.filter((run) => run.summary && run.progress.length)
      .map((run) => ({ label: `${run.label}: Result`,
        points: [[x.of(run.progress.at(-1)), run.summary[field]]] }));
    const series = (field) => [...this.runs.map((run) => ({ label: run.label,
      points: run.progress.map((p) => [x.of(p), p[field]]) })), ...results(field)];
    const dot = this.runs.some((run) => run.summary) ? "; the dot: the Result's" : "";
    const figure = (caption, chart) => el("figure", {},
      el("figcaption", { text: `${caption}${dot}` }), chart);
    show(this.charts,
      figure("Objective of the running average", lineChart({ name: "objective",
        title: "Objective of the running average", log: "positive", xLabel: x.label,
        yLabel: "objective", series: series("objective") })),
      figure("Maximum constraint violation (0 drawn on the floor)", lineChart({
        name: "violation", title: "Maximum constraint violation", log: "always",
        xLabel: x.label, yLabel: "max violation", series: series("max_violation") })));
  }
}
