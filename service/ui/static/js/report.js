// What a user asks of a Result first: feasible or not, its objective and certified gap; then
// every constraint on training and validation data (rates with their bootstrap interval
// bars, a group loss's mean loss against its bound), one folded table per model under a
// line saying whether all are within tolerance.

import { el, folded, num, table } from "./dom.js";
import { gapText } from "./figures.js";

/** The verdict: the Result's own (feasible within its tolerance or not), the objective,
 * the certified gap. */
export function verdict(result) {
  const { feasible, tolerance } = result.feasibility;
  const violation = result.expected.max_violation;
  const gap = result.stats.relative_gap;
  return el("section", { class: `verdict ${feasible ? "feasible" : "infeasible"}`,
    "aria-label": "Verdict" },
  el("p", { class: "headline", text: feasible ? "Feasible" : "Not feasible" }),
  el("p", { class: "objective", text: `expected objective ${num(result.expected.objective)}` }),
  el("p", { text: `largest expected violation ${num(violation)} (tolerance ${num(tolerance)})` }),
  gap === undefined ? null
    : el("p", { class: "gap", text: `certified: within ${gapText(gap)} of the optimum` }));
}

/** A rate's value with its interval as a bar on [0, 1] (widths set through the CSSOM). */
function rateCell(term) {
  if (!term || term.value === null) return "—";
  const cell = el("span", { class: "rate" }, el("span", { text: num(term.value) }));
  if (term.interval) {
    const [low, high] = term.interval;
    const span = el("span", { class: "interval", title: `95% interval ${num(low)} – ${num(high)}` });
    span.style.left = `${100 * low}%`;
    span.style.width = `${Math.max(100 * (high - low), 0.5)}%`;
    const mark = el("span", { class: "value" });
    mark.style.left = `${100 * term.value}%`;
    cell.append(el("span", { class: "bar", role: "img",
      "aria-label": `interval ${num(low)} to ${num(high)}` }, span, mark));
  }
  return cell;
}

function label(constraint) {
  return `constraints[${constraint.index}] ${constraint.type}`;
}

function violationText(constraint) {
  if (!constraint || constraint.worst === null) return "—";
  const flag = constraint.violated ? ` ✗ ${constraint.violated} violated` : " ✓";
  return `${num(constraint.worst)}${flag}`;
}

/** Rows of one model: each constraint's worst g, then each rate term, training vs validation. */
function rows(training, validation) {
  const out = [["objective", num(training.objective), validation ? num(validation.objective) : "—"],
    ["error", num(training.error), validation ? num(validation.error) : "—"]];
  training.constraints.forEach((constraint, k) => {
    const held = validation ? validation.constraints[k] : null;
    out.push([label(constraint), violationText(constraint), violationText(held)]);
    constraint.terms.forEach((term, t) => {
      out.push([`  ${term.metric}(${term.group ?? "all"}), n = ${num(term.examples)}`,
        rateCell(term), held ? rateCell(held.terms[t]) : "—"]);
    });
    if (constraint.type === "group_loss") {
      out.push([`  mean ${constraint.loss}(${constraint.group ?? "all"}), n = `
        + `${num(constraint.examples)}, bound ${num(constraint.bound)}`,
      num(constraint.lhs), held ? num(held.lhs) : "—"]);
    }
  });
  return out;
}

/** What a model's table is about. */
function caption(name) {
  if (name === "mixture") return "mixture (the randomized classifier the guarantees are about)";
  if (name === "deterministic") return "deterministic model (the best single candidate)";
  return name;
}

/** The constraints a model breaks beyond the tolerance, e.g. "constraints[2]". */
function broken(model) {
  return model.constraints.filter((c) => c.violated).map((c) => `constraints[${c.index}]`);
}

/** One line on a model's table: how many constraints, which (if any) fail, the error. */
function summary(training, validation) {
  const count = training.constraints.length;
  const error = `training error ${num(training.error)}`;
  if (!count) return `no constraints; ${error}`;
  const failing = [["training", broken(training)],
    ...(validation ? [["validation", broken(validation)]] : [])].filter(([, b]) => b.length);
  const held = failing.length
    ? `beyond tolerance: ${failing.map(([data, b]) => `${b.join(", ")} on ${data}`).join("; ")}`
    : `all within tolerance${validation ? " on training and validation" : ""}`;
  return `${count} constraint${count === 1 ? "" : "s"}, ${held}; ${error}`;
}

/** The constraints tables: one per deployed model the report describes, each folded. */
export function constraintsSection(result) {
  const report = result.report;
  if (!report) {
    return el("p", { class: "muted", text: "No constraints report: reports cover one "
      + "empirical risk (not max_of, quadratic or pairwise)." });
  }
  const held = report.validation;
  return el("section", { class: "constraints", "aria-label": "Constraints" },
    el("h2", { text: "Constraints" }),
    el("p", { class: "muted", text: `training ${num(report.training.examples)} rows; `
      + (held ? `validation ${num(held.examples)} rows; ` : "no validation data; ")
      + `rates with ${Math.round(100 * report.bootstrap.level)}% bootstrap intervals `
      + `(${num(report.bootstrap.resamples)} resamples)` }),
    Object.entries(report.training.models).map(([name, model]) => {
      const validation = held ? held.models[name] : null;
      return folded(name, summary(model, validation), table(caption(name),
        ["", "training", "validation"], rows(model, validation)));
    }));
}
