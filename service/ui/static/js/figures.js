// A job's figures as people read them: while it runs, its latest progress report; once it
// has succeeded, its Result's summary (the last progress report is history, not the
// outcome). Certified gaps are written as service/progress.py's gap_text writes them.

import { num } from "./dom.js";

/** A certified relative gap as a percentage of the optimum: "0.37%", "1.5e-8%", "0%". */
export function gapText(gap) {
  const percent = 100 * Math.max(gap, 0);
  if (percent === 0) return "0%";
  return percent >= 0.01 ? `${percent.toFixed(2)}%` : `${percent.toExponential(1)}%`;
}

/** The objective and max violation to show as a job's current ones (a status document or a
 * list entry): its Result's summary once it has one, else its latest progress, else null. */
export function currentFigures(job) {
  return job.summary || job.progress || null;
}

/** The Result's verdict on its constraints, as service/progress.py's feasibility_text
 * writes it: "feasible (tolerance 0.001)" or "NOT feasible (tolerance 0.001)". */
export function feasibilityText(feasibility) {
  return `${feasibility.feasible ? "feasible" : "NOT feasible"} (tolerance ${num(feasibility.tolerance)})`;
}

/** A succeeded job's outcome in one line: the Result's verdict, objective, largest expected
 * violation, members and certified gap. */
export function summaryText(summary) {
  const gap = summary.relative_gap === null || summary.relative_gap === undefined ? ""
    : ` · certified gap ${gapText(summary.relative_gap)}`;
  return `Result: ${feasibilityText(summary.feasibility)} · objective ${num(summary.objective)}`
    + ` · expected max violation ${num(summary.max_violation)}`
    + ` · ${num(summary.members)} member(s)${gap}`;
}
