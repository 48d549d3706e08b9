// Convergence charts of one or more runs: objective and max violation against iteration or
// solver time, from the jobs' progress events; a finished run's Result is a dot at its end.

import { legend, lineChart, redraw } from "./chart.js";
import { el } from "./dom.js";

const AXES = {
  iteration: { label: "iteration", of: (p) => p.iteration },
  time: { label: "solver time (s)", of: (p) => p.elapsed_s },
};

const CHARTS = {
  objective: { field: "objective", title: "Objective of the running average",
    caption: "Objective of the running average", log: "positive", yLabel: "objective" },
  violation: { field: "max_violation", title: "Maximum constraint violation",
    caption: "Maximum constraint violation (0 drawn on the floor)", log: "always",
    yLabel: "max violation" },
};

let instances = 0;

/** Charts that redraw (at most once per frame) when runs gain progress reports. */
export class Convergence {
  /** @param {string[]} labels - one per run */
  constructor(labels) {
    this.runs = labels.map((label) => ({ label, progress: [] }));
    this.axis = "iteration";
    this.pending = false;
    this.charts = Object.fromEntries(Object.keys(CHARTS).map((name) =>
      [name, lineChart(this.spec(name))]));
    this.captions = Object.fromEntries(Object.entries(CHARTS).map(([name, chart]) =>
      [name, el("figcaption", { text: chart.caption })]));
    const group = `x-axis-${++instances}`;
    const choice = (value) => el("label", {}, el("input", { type: "radio", name: group, value,
      checked: value === this.axis, onchange: () => { this.axis = value; this.draw(); } }),
    ` ${AXES[value].label}`);
    this.node = el("section", { class: "convergence", "aria-label": "Convergence" },
      el("fieldset", { class: "axis" }, el("legend", { text: "Horizontal axis" }),
        choice("iteration"), choice("time")),
      el("div", { class: "charts" }, Object.entries(CHARTS).map(([name, chart]) =>
        el("figure", {}, this.captions[name], this.charts[name]))),
      labels.length > 1 ? legend(labels) : null);
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

  /** The line chart spec of chart `name` (a key of CHARTS) on the chosen horizontal axis. */
  spec(name) {
    const { field, title, log, yLabel } = CHARTS[name];
    const x = AXES[this.axis];
    const results = this.runs.filter((run) => run.summary && run.progress.length)
      .map((run) => ({ label: `${run.label}: Result`,
        points: [[x.of(run.progress.at(-1)), run.summary[field]]] }));
    return { name, title, log, yLabel, xLabel: x.label, fromZero: true,
      series: [...this.runs.map((run) => ({ label: run.label,
        points: run.progress.map((p) => [x.of(p), p[field]]) })), ...results] };
  }

  draw() {
    const dot = this.runs.some((run) => run.summary) ? "; the dot: the Result's" : "";
    for (const [name, chart] of Object.entries(this.charts)) {
      redraw(chart, this.spec(name));
      this.captions[name].textContent = `${CHARTS[name].caption}${dot}`;
    }
  }
}
