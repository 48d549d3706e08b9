// The compare page: the convergence curves of two or more finished jobs on one chart.

import { json } from "./api.js";
import { Convergence } from "./convergence.js";
import { badge, clipped, el, show, table, when } from "./dom.js";
import { followEvents } from "./events.js";
import { problemBox } from "./problem.js";

const FINISHED = new Set(["succeeded", "failed", "cancelled"]);

/** A form listing the tenant's succeeded jobs to pick two or more of. */
async function picker(go, signal) {
  const page = await json("/v1/jobs?status=succeeded&limit=50", { signal });
  const chosen = new Set();
  const button = el("button", { type: "submit", disabled: true }, "Compare");
  const rows = page.jobs.map((job) => [
    el("input", { type: "checkbox", "aria-label": `compare ${job.id}`, onchange: (e) => {
      if (e.target.checked) chosen.add(job.id); else chosen.delete(job.id);
      button.disabled = chosen.size < 2;
    } }),
    el("a", { href: `#/jobs/${job.id}`, class: "mono", text: job.id.slice(0, 12) }),
    clipped(job.name), job.algorithm || "—", badge(job.status), when(job.ended_at)]);
  return el("form", { onsubmit: (e) => { e.preventDefault(); go(`#/compare?ids=${[...chosen]}`); } },
    el("p", { text: "Pick two or more succeeded jobs." }),
    page.jobs.length ? table("Succeeded jobs, newest first",
      ["", "id", "name", "algorithm", "status", "ended"], rows)
      : el("p", { text: "No succeeded jobs yet." }),
    button);
}

/** Render the compare page into `main`; returns the function that stops its requests. */
export function comparePage(main, params, go) {
  const controller = new AbortController();
  const { signal } = controller;
  const ids = (params.get("ids") || "").split(",").filter(Boolean);
  const messages = el("div", { class: "messages" });
  show(main, el("h1", { text: "Compare jobs" }), messages);
  const fail = (error) => {
    if (error.name !== "AbortError") messages.append(problemBox(error));
  };
  if (ids.length < 2) {
    picker(go, signal).then((form) => main.append(form), fail);
    return () => controller.abort();
  }
  const labels = ids.map((id) => id.slice(0, 8));
  const chart = new Convergence(labels);
  const summary = el("div");
  main.append(summary, chart.node);
  Promise.all(ids.map((id) => json(`/v1/jobs/${id}`, { signal }))).then(async (jobs) => {
    show(summary, table("The compared jobs", ["", "id", "name", "algorithm", "status"],
      jobs.map((job, k) => [labels[k], el("a", { href: `#/jobs/${job.id}`, class: "mono",
        text: job.id }), clipped(job.name), job.algorithm || "—", badge(job.status)])));
    const running = jobs.filter((job) => !FINISHED.has(job.status));
    if (running.length) {
      messages.append(el("p", { class: "note", text: `Still running: ${running.map((j) => j.id)
        .join(", ")}; their curves grow until they finish.` }));
    }
    await Promise.all(jobs.map((job, k) => followEvents(job.links.events, {
      onEvent: (event) => { if (event.type === "progress") chart.add(k, event.data); } }, signal)));
  }).catch(fail);
  return () => controller.abort();
}
