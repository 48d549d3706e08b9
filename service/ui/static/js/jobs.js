// The jobs page: the tenant's jobs, newest first, filtered and paginated, refreshed live.

import { json } from "./api.js";
import { badge, clipped, el, num, show, table, when } from "./dom.js";
import { currentFigures } from "./figures.js";
import { problemBox } from "./problem.js";

const STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"];
const PAGE = 20;
const REFRESH_MS = 2000;

/** The options of a filter: "any", then `options`, with `value` selected. */
function choices(options, value) {
  return [el("option", { value: "", text: "any" }),
    ...options.map((o) => el("option", { value: o, text: o, selected: o === value }))];
}

function select(name, label, options, value, onchange) {
  return el("label", {}, `${label} `, el("select", { name, onchange }, choices(options, value)));
}

/** Render the jobs page into `main`; returns the function that stops its refreshing. */
export function jobsPage(main, params, go) {
  const filters = { status: params.get("status") || "", algorithm: params.get("algorithm") || "" };
  const offset = Number(params.get("offset")) || 0;
  const chosen = new Set();
  const route = (changes) => {
    const query = new URLSearchParams({ ...filters, offset, ...changes });
    for (const [k, v] of [...query]) if (!v || v === "0") query.delete(k);
    go(`#/jobs?${query}`);
  };
  const compare = el("button", { type: "button", disabled: true,
    onclick: () => go(`#/compare?ids=${[...chosen].join(",")}`) }, "Compare selected");
  const controller = new AbortController();
  // The algorithms are the API's (GET /v1/algorithms); until they come, only the chosen one.
  const algorithms = select("algorithm", "Algorithm", filters.algorithm ? [filters.algorithm]
    : [], filters.algorithm, (e) => route({ algorithm: e.target.value, offset: 0 }));
  const body = el("div", { class: "jobs" });
  const pager = el("nav", { class: "pager", "aria-label": "Pages of jobs" });
  show(main, el("h1", { text: "Jobs" }),
    el("form", { class: "filters", onsubmit: (e) => e.preventDefault() },
      select("status", "Status", STATUSES, filters.status, (e) => route({ status: e.target.value,
        offset: 0 })),
      algorithms,
      compare),
    body, pager);
  json("/v1/algorithms", { signal: controller.signal }).then(({ names }) => {
    algorithms.querySelector("select").replaceChildren(...choices(names, filters.algorithm));
  }, (error) => {
    if (error.name !== "AbortError") show(body, problemBox(error));
  });

  const row = (job) => {
    const box = el("input", { type: "checkbox", "aria-label": `compare ${job.id}`,
      "data-focus": `check-${job.id}`,
      checked: chosen.has(job.id), onchange: (e) => {
        if (e.target.checked) chosen.add(job.id); else chosen.delete(job.id);
        compare.disabled = chosen.size < 2;
      } });
    const p = job.progress || job.last_progress || {};
    const figures = currentFigures(job) || {};
    return [box, el("a", { href: `#/jobs/${job.id}`, class: "mono",
      "data-focus": `link-${job.id}`, text: job.id.slice(0, 12) }),
      clipped(job.name), job.algorithm || "—", badge(job.status), when(job.created_at),
      p.iteration === undefined ? "—" : `${num(p.iteration)} / ${num(p.iterations)}`,
      num(figures.objective), num(figures.max_violation)];
  };

  let timer = null;
  let shown = null;
  const load = async () => {
    const query = new URLSearchParams({ offset, limit: PAGE });
    for (const [k, v] of Object.entries(filters)) if (v) query.set(k, v);
    try {
      const page = await json(`/v1/jobs?${query}`, { signal: controller.signal });
      const text = JSON.stringify(page);
      if (text !== shown) {
        shown = text;
        render(page);
      }
    } catch (error) {
      if (error.name === "AbortError") return;
      shown = null;
      show(body, problemBox(error));
    }
    if (!controller.signal.aborted) timer = setTimeout(load, REFRESH_MS);
  };
  const render = (page) => {
    const focused = document.activeElement?.dataset?.focus;
    show(body, page.jobs.length ? table("The tenant's jobs, newest first",
      ["", "id", "name", "algorithm", "status", "submitted", "iteration", "objective",
        "max violation"], page.jobs.map(row)) : el("p", { text: "No jobs match." }));
    show(pager,
      offset > 0 ? el("button", { type: "button", onclick: () => route({
        offset: Math.max(0, offset - PAGE) }) }, "Newer") : null,
      el("span", { text: page.jobs.length ? `jobs ${offset + 1}–${offset + page.jobs.length}`
        : "" }),
      page.next ? el("button", { type: "button", onclick: () => route({
        offset: offset + PAGE }) }, "Older") : null);
    if (focused) body.querySelector(`[data-focus="${focused}"]`)?.focus();
  };
  load();
  return () => { controller.abort(); clearTimeout(timer); };
}
