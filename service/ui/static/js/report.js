// What a user asks of a Result first: feasible or not, the certified gap, and every
// constraint on training and validation data (rates with their bootstrap interval bars).

import { el, num, table } from "./dom.js";
import { gapText } from "./figures.js";

const DEFAULT_TOLERANCE = 1e-3;

/** The verdict: feasible (within the tolerance) or not, and the certified gap if any. */
export function verdict(result) {
  const tolerance = result.report ? result.report.tolerance : DEFAULT_TOLERANCE;
  const violation = result.expected.max_violation;
  const feasible = violation <= tolerance;
  const gap = result.stats.relative_gap;
  return el("section", { class: `verdict ${feasible ? "feasible" : "infeasible"}`,
    "aria-label": "Verdict" },
  el("p", { class: "headline", text: feasible ? "Feasible" : "Not feasible" }),
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
  });
  return out;
}

/** The constraints tables: one per deployed model the report describes. */
export function constraintsSection(result) {
  const report = result.report;
  if (!report) {
    return el("p", { text: "No report: reports cover one empirical risk (not max_of, quadratic or pairwise)." });
  }
  const held = report.validation;
  return el("section", { class: "constraints", "aria-label": "Constraints" },
    el("h2", { text: "Constraints" }),
    el("p", { class: "muted", text: `training ${num(report.training.examples)} rows; `
      + (held ? `validation ${num(held.examples)} rows; ` : "no validation data; ")
      + `rates with ${Math.round(100 * report.bootstrap.level)}% bootstrap intervals `
      + `(${num(report.bootstrap.resamples)} resamples)` }),
    Object.entries(report.training.models).map(([name, model]) => table(
      name === "mixture" ? "mixture (the randomized classifier the guarantees are about)"
        : name === "deterministic" ? "deterministic model (the best single candidate)" : name,
      ["", "training", "validation"],
      rows(model, held ? held.models[name] : null))));
}
