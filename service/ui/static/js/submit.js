// The submit page: paste or upload a spec, validate it (errors at their JSON path), submit.

import { ApiError, json } from "./api.js";
import { el, num, show } from "./dom.js";
import { problemBox } from "./problem.js";

/** The spec text parsed as JSON, or an ApiError naming the line and column. */
function parsed(text) {
  try {
    JSON.parse(text);
    return null;
  } catch (error) {
    return new ApiError({ status: 0, title: "Not JSON",
      detail: `the spec is not valid JSON: ${error.message}`, errors: [{ path: "",
        message: "fix the JSON syntax first" }] });
  }
}

function summary(answer) {
  return el("div", { class: "valid", role: "status" },
    el("strong", { text: "The spec is valid." }),
    el("p", { text: `algorithm ${answer.algorithm}; ${Object.entries(answer.sizes)
      .map(([k, v]) => `${k} = ${num(v)}`).join(", ")}; memory about `
      + `${num(answer.memory_estimate_bytes / 2 ** 20)} MiB` }),
    answer.notes.length ? el("ul", {}, answer.notes.map((n) => el("li", { text: n }))) : null);
}

/** Render the submit page into `main`. */
export function submitPage(main, go) {
  const controller = new AbortController();
  const outcome = el("div", { class: "messages", "aria-live": "polite" });
  const text = el("textarea", { id: "spec", name: "spec", rows: 18, spellcheck: "false",
    placeholder: '{"spec_version": 1, ...}' });
  const file = el("input", { type: "file", id: "spec-file", accept: ".json,application/json",
    onchange: async () => {
      if (file.files.length) text.value = await file.files[0].text();
    } });
  const send = async (path, onAnswer) => {
    show(outcome);
    const bad = parsed(text.value);
    if (bad) return show(outcome, problemBox(bad));
    try {
      onAnswer(await json(path, { method: "POST", body: text.value, signal: controller.signal }));
    } catch (error) {
      if (error.name !== "AbortError") show(outcome, problemBox(error));
    }
    return null;
  };
  show(main, el("h1", { text: "Submit a job" }),
    el("form", { class: "submit", onsubmit: (e) => {
      e.preventDefault();
      send("/v1/jobs", (answer) => go(`#/jobs/${answer.id}`));
    } },
    el("label", { for: "spec", text: "Problem spec (JSON)" }), text,
    el("label", { for: "spec-file", text: "…or upload a spec file " }), file,
    el("div", { class: "actions" },
      el("button", { type: "button", onclick: () => send("/v1/validate",
        (answer) => show(outcome, summary(answer))) }, "Validate"),
      el("button", { type: "submit", class: "primary" }, "Submit"))),
    outcome);
  return () => controller.abort();
}
