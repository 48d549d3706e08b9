// The dashboard's router: #/jobs, #/jobs/{id}, #/compare?ids=…, #/submit, #/signin.

import { apiKey, isOpen, setApiKey } from "./api.js";
import { comparePage } from "./compare.js";
import { el, show } from "./dom.js";
import { jobPage } from "./job.js";
import { jobsPage } from "./jobs.js";
import { signInPage } from "./signin.js";
import { submitPage } from "./submit.js";

const main = document.getElementById("main");
const account = document.getElementById("account");
let open = false;
let stop = () => {};

function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function showAccount() {
  if (open) {
    show(account, el("span", { class: "note", text: "open dev mode" }));
  } else if (apiKey()) {
    show(account, el("button", { type: "button", onclick: () => { setApiKey(null); go("#/signin"); } },
      "Sign out"));
  } else {
    show(account);
  }
}

function route() {
  stop();
  const [path, query = ""] = location.hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query);
  const parts = path.split("/").filter(Boolean);
  const page = parts[0] || "jobs";
  for (const link of document.querySelectorAll("[data-nav]")) {
    if (link.dataset.nav === page) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  showAccount();
  if (!open && !apiKey()) {
    stop = signInPage(main, () => go("#/jobs"));
    return;
  }
  if (page === "jobs" && parts[1]) stop = jobPage(main, decodeURIComponent(parts[1]));
  else if (page === "compare") stop = comparePage(main, params, go);
  else if (page === "submit") stop = submitPage(main, go);
  else if (page === "signin") stop = signInPage(main, () => go("#/jobs"));
  else stop = jobsPage(main, params, go);
  document.title = `${main.querySelector("h1")?.textContent || "LightTouch"} · LightTouch`;
  if (document.activeElement === document.body || !main.contains(document.activeElement)) {
    main.focus({ preventScroll: true });
  }
}

/** The skip link focuses the page's content (its #main would otherwise be taken as a route). */
function skipToContent(event) {
  event.preventDefault();
  main.focus();
}

async function start() {
  document.querySelector(".skip").addEventListener("click", skipToContent);
  try {
    open = await isOpen();
  } catch {
    open = false;
  }
  window.addEventListener("hashchange", route);
  route();
}

start();
