// Showing an API problem (RFC 9457) as the API says it.

import { el } from "./dom.js";

/** A box with the problem's title, detail and each error at its JSON path. */
export function problemBox(error) {
  const problem = error.problem || { title: "Error", detail: String(error.message || error) };
  return el("div", { class: "problem", role: "alert" },
    el("strong", { text: problem.title }),
    el("p", { text: problem.detail }),
    problem.errors ? el("ul", { class: "issues" }, problem.errors.map((issue) =>
      el("li", {}, el("code", { class: "path", text: issue.path || "(document)" }), " ",
        issue.message))) : null);
}
