// Building DOM nodes without HTML strings, and formatting numbers and dates.

/**
 * Create an element.
 * @param {string} tag - tag name ("svg:" prefix for SVG elements)
 * @param {Object} [attributes] - attributes; `on<event>` keys add listeners, `text` sets text
 * @param {...(Node|string|null)} children - appended in order (null skipped)
 * @returns {Element}
 */
export function el(tag, attributes = {}, ...children) {
  const svg = tag.startsWith("svg:");
  const node = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
    : document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

/** A number for people: 4 significant digits, exponent notation outside [1e-3, 1e6). */
export function num(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value !== "number") return String(value);
  if (Number.isInteger(value) && Math.abs(value) < 1e9) return value.toLocaleString("en-US");
  const size = Math.abs(value);
  if (size !== 0 && (size < 1e-3 || size >= 1e6)) return value.toExponential(3);
  return value.toPrecision(4).replace(/\.?0+$/, "");
}

/** An ISO timestamp as local date and time, or a dash. */
export function when(iso) {
  return iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "short",
    timeStyle: "medium" }) : "—";
}

/** A table with a header row and one row per item, scrolling sideways in its own box. */
export function table(caption, headings, rows) {
  return el("div", { class: "scroll" }, el("table", {},
    el("caption", { text: caption }),
    el("thead", {}, el("tr", {}, headings.map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((c) =>
      el("td", {}, c instanceof Node ? c : String(c))))))));
}

/** Text cut to its cell's width (the whole text in its tooltip). */
export function clipped(text) {
  return text ? el("span", { class: "clip", title: text, text }) : "—";
}

/** A status badge (its class colors it). */
export function badge(status) {
  return el("span", { class: `badge ${status}`, text: status });
}

/** Replace the contents of `node`. */
export function show(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined));
}

/** A closed <details>: its summary names what is inside (`title`: `line`), then `content`. */
export function folded(title, line, ...content) {
  return el("details", {}, el("summary", {}, el("strong", { text: title }), `: ${line}`),
    ...content);
}
