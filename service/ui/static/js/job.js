// The job page: the status and, once it has ended, the verdict (or the error) first; then the
// live convergence chart, the mixture, the constraints (one folded table per model), a
// sweep's front and a calibrated model's pictures; the numbers, projection, statistics and
// the job's timestamps folded last; cancel and downloads.

import { download, json } from "./api.js";
import { Convergence } from "./convergence.js";
import { badge, el, folded, num, show, table, when } from "./dom.js";
import { followEvents } from "./events.js";
import { summaryText } from "./figures.js";
import { frontSection } from "./front.js";
import { modelSections } from "./model.js";
import { problemBox } from "./problem.js";
import { constraintsSection, verdict } from "./report.js";

const ACTIVE = new Set(["queued", "running"]);

function facts(pairs) {
  return el("dl", { class: "facts" }, pairs.map(([term, value]) =>
    [el("dt", { text: term }), el("dd", {}, value instanceof Node ? value : String(value))]));
}

/** The Result's notes, if it has any. */
function notes(result) {
  return result.notes.length ? el("ul", { class: "notes", "aria-label": "Notes" },
    result.notes.map((n) => el("li", { text: n }))) : null;
}

/** Everything of the Result below the chart: what it is, then its numbers folded. */
function resultSections(result) {
  const projected = result.projected;
  const stats = Object.entries(result.stats);
  return [
    el("h2", { text: "Mixture" }),
    table(`${result.mixture.length} member(s) the shrinking LP kept`,
      ["weight", "iteration", "kind", "objective", "max violation"],
      result.mixture.map((m) => [num(m.weight), num(m.iteration), m.kind, num(m.objective),
        num(m.max_violation)])),
    constraintsSection(result),
    result.sweep ? frontSection(result.sweep) : null,
    ...modelSections(result),
    el("h2", { text: "Details" }),
    folded("Result", `${result.algorithm}; sizes, expected and mean's objective and violation`,
      facts([["algorithm", result.algorithm],
        ["sizes", `${num(result.sizes.parameters)} parameters, ${num(result.sizes.constraints)} constraints, ${num(result.sizes.examples)} examples`],
        ["expected objective", num(result.expected.objective)],
        ["expected max violation", num(result.expected.max_violation)],
        ["mean's objective", num(result.mean.objective)],
        ["mean's max violation", num(result.mean.max_violation)]])),
    folded("Projection", projected ? `${projected.method}, ${projected.status}` : "left out",
      projected ? facts([["method", projected.method], ["status", projected.status],
        ["objective", num(projected.objective)], ["max violation", num(projected.max_violation)]])
        : el("p", { text: "The spec's output options left the projection out." })),
    folded("Stats", `${stats.length} solver statistics`, table("Solver statistics",
      ["name", "value"], stats.map(([name, value]) => [name, num(value)]))),
  ];
}

/** Render the page of job `id` into `main`; returns the function that stops following it. */
export function jobPage(main, id) {
  const controller = new AbortController();
  const { signal } = controller;
  const heading = el("h1", {}, "Job ", el("span", { class: "mono", text: id }));
  const status = el("span", { class: "status", "aria-live": "polite" });
  const connection = el("span", { class: "connection", "aria-live": "polite" });
  const name = el("span", { class: "muted job-name" });
  const failure = el("div");
  const outcome = el("div", { class: "outcome" });
  const details = el("details", { class: "about" });
  const actions = el("div", { class: "actions" });
  const messages = el("div", { class: "messages" });
  const latest = el("p", { class: "latest", "aria-live": "off" });
  const chart = new Convergence([id]);
  const result = el("div");
  show(main, heading, el("p", {}, status, " ", name, " ", connection), failure, outcome, messages,
    actions, latest, chart.node, result, details);

  const act = async (work) => {
    try {
      show(messages);
      await work();
    } catch (error) {
      if (error.name !== "AbortError") show(messages, problemBox(error));
    }
  };
  const cancel = el("button", { type: "button", class: "danger",
    onclick: () => act(async () => { setJob(await json(`/v1/jobs/${id}`, { method: "DELETE" })); }),
  }, "Cancel job");
  const downloads = [
    el("button", { type: "button", onclick: () => act(() => download(`/v1/jobs/${id}/result`,
      `${id}.json`)) }, "Download Result JSON"),
    el("button", { type: "button", onclick: () => act(() => download(
      `/v1/jobs/${id}/solution.npy`, `${id}.npy`)) }, "Download solution.npy"),
  ];

  let job = null;
  let resultShown = false;
  let summarized = false;
  // Once the job has succeeded (its status document has the Result's summary), the line
  // and the chart end on the Result's figures, not on the last progress report.
  const summarize = (summary) => {
    summarized = true;
    latest.textContent = summaryText(summary);
    chart.finish(0, summary);
  };
  const setJob = (document) => {
    job = document;
    show(status, badge(job.status));
    name.textContent = job.name || "";
    show(details, el("summary", {}, el("strong", { text: "Job" }),
      `: ${job.algorithm || "algorithm not chosen yet"}; submitted ${when(job.created_at)}`),
    facts([["name", job.name || "—"], ["algorithm", job.algorithm || "—"],
      ["submitted", when(job.created_at)], ["started", when(job.started_at)],
      ["ended", when(job.ended_at)]]));
    show(failure, job.error ? el("div", { class: "problem", role: "alert" },
      el("strong", { text: `Job ${job.status}` }), el("p", { text: job.error })) : null);
    show(actions, ACTIVE.has(job.status) ? cancel : null,
      job.status === "succeeded" ? downloads : null);
    if (job.summary) summarize(job.summary);
    if (job.status === "succeeded" && !resultShown) {
      resultShown = true;
      act(async () => {
        const answer = await json(`/v1/jobs/${id}/result`, { signal });
        show(outcome, verdict(answer), notes(answer));
        show(result, resultSections(answer));
      });
    }
  };
  const onEvent = (event) => {
    if (event.type === "progress") {
      chart.add(0, event.data);
      const p = event.data;
      latest.dataset.reports = chart.count(0);
      if (summarized) return;
      latest.textContent = `iteration ${num(p.iteration)} of ${num(p.iterations)} · `
        + `${num(p.elapsed_s)} s · objective ${num(p.objective)} · max violation `
        + `${num(p.max_violation)} · ${chart.count(0)} reports`;
    } else if (event.data && event.data.status && job && event.data.status !== job.status) {
      act(async () => setJob(await json(`/v1/jobs/${id}`, { signal })));
    }
  };
  act(async () => {
    try {
      setJob(await json(`/v1/jobs/${id}`, { signal }));
    } catch (error) {
      show(main, heading, messages);
      throw error;
    }
    await followEvents(job.links.events, { onEvent, onConnection: (state) => {
      connection.textContent = state === "live" ? "" : "connection lost, reconnecting…";
    } }, signal);
    connection.textContent = "";
  });
  return () => controller.abort();
}
