// Sign-in: the API key, checked against the API, kept in this tab's sessionStorage.

import { json, setApiKey } from "./api.js";
import { el, show } from "./dom.js";
import { problemBox } from "./problem.js";

/** Render the sign-in page into `main`; `done` runs once a key is accepted. */
export function signInPage(main, done) {
  const key = el("input", { id: "api-key", name: "api-key", type: "password", required: true,
    autocomplete: "off", minlength: 8 });
  const outcome = el("div", { class: "messages" });
  show(main, el("h1", { text: "Sign in" }),
    el("p", { text: "Enter your API key. It stays in this browser tab only (sessionStorage) "
      + "and is sent as a Bearer header, never in a URL or cookie." }),
    el("form", { class: "signin", onsubmit: async (e) => {
      e.preventDefault();
      setApiKey(key.value);
      try {
        await json("/v1/jobs?limit=1");
        done();
      } catch (error) {
        setApiKey(null);
        show(outcome, problemBox(error));
      }
    } },
    el("label", { for: "api-key", text: "API key" }), key,
    el("button", { type: "submit", class: "primary" }, "Sign in")),
    outcome);
  key.focus();
  return () => {};
}
