"""The ``lighttouch`` command, run as a real process, and the Python API it wraps."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from service.progress import gap_text, summary_text
from tests.specs import random_spec, short_fairness_spec
from worker import Result, solve
from worker.settings import budgeted_settings

TIMING = {"wall_s", "solve_s", "lp_s", "projection_s", "load_s", "data_load_s", "report_s",
          "projection_s_total", "lower_bound_s", "polish_s"}


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "service.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "COLUMNS": "200"})


def bar_end(stderr: str) -> dict[str, str]:
    """The objective and violation the progress bar last drew (``f=``, ``viol=``)."""
    return dict(re.findall(r"\b(f|viol)=(\S+)", stderr)[-2:])


def ends_on(result: Result) -> dict[str, str]:
    """What the bar's last figures read when they are ``result``'s."""
    return {"f": f"{result.expected.objective:.6g}",
            "viol": f"{result.expected.max_violation:.2e}"}


def comparable(result: dict) -> dict:
    result = dict(result)
    result["stats"] = {k: v for k, v in result["stats"].items() if k not in TIMING}
    return result


def test_solve_writes_the_same_result_as_the_python_api(tmp_path):
    spec = random_spec("logistic", "mixed", 4, iterations=30_000)
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    out = tmp_path / "result.json"
    process = run_cli("solve", str(spec_path), "-o", str(out))
    assert process.returncode == 0, process.stderr
    written = Result.model_validate_json(out.read_text())
    assert len(written.mixture) <= written.sizes.constraints + 1
    in_process = solve(spec, settings=budgeted_settings())   # held to the CLI's budget
    assert comparable(written.model_dump()) == comparable(in_process.model_dump())


def test_solve_says_how_far_a_hinge_answer_can_be_from_the_optimum(tmp_path):
    spec = random_spec("hinge", "lattice", 2, iterations=20_000)
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    out = tmp_path / "result.json"
    process = run_cli("solve", str(spec_path), "-o", str(out), "-q")
    assert process.returncode == 0, process.stderr
    gap = json.loads(out.read_text())["stats"]["relative_gap"]
    said = " ".join((process.stdout + process.stderr).split())
    assert f"within {gap_text(gap)} of the optimum (certified)" in said, said


def test_the_bar_and_the_summary_end_on_the_results_figures_not_the_last_report(tmp_path):
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(short_fairness_spec()))
    out = tmp_path / "result.json"
    process = run_cli("solve", str(spec_path), "-o", str(out))
    assert process.returncode == 0, process.stderr
    result = Result.model_validate_json(out.read_text())

    assert result.expected.max_violation < 1e-6   # the last report's is about 0.05
    assert bar_end(process.stderr) == ends_on(result), process.stderr
    said = " ".join(process.stderr.split())
    assert summary_text(result.algorithm, result.summary()) in said, said


def test_relative_gaps_print_as_percentages_of_the_optimum():
    assert gap_text(0.0037) == "0.37%"
    assert gap_text(1.546e-10) == "1.5e-8%"
    assert gap_text(9.9e-5) == "9.9e-3%" and gap_text(1e-4) == "0.01%"
    assert gap_text(-1e-15) == "0%"            # an LP's rounding below the bound


def test_same_spec_and_seed_give_the_same_result():
    spec = random_spec("hinge", "lattice", 2, iterations=20_000)
    assert comparable(solve(spec).model_dump()) == comparable(solve(spec).model_dump())


def test_validate_prints_a_summary(tmp_path):
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(random_spec("squared", "ordering_chain", 1)))
    process = run_cli("validate", str(spec_path))
    assert process.returncode == 0, process.stderr
    summary = json.loads(process.stdout)
    assert summary["sizes"] == {"parameters": 8, "constraints": 7, "examples": 80}


def test_bad_specs_exit_1_with_the_field_and_no_traceback(tmp_path):
    spec = random_spec("hinge", "ordering_pairs", 0)
    spec["constraints"][0]["pairs"][0] = [0, 9000]
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    for command in ("solve", "validate"):
        process = run_cli(command, str(spec_path))
        assert process.returncode == 1
        assert "constraints[0].pairs[0][1]: index 9000 is out of range" in process.stderr
        assert "Traceback" not in process.stderr


def test_unreadable_and_non_json_specs(tmp_path):
    process = run_cli("validate", str(tmp_path / "missing.json"))
    assert process.returncode == 1 and "cannot read" in process.stderr
    process = run_cli("validate", "-", stdin="{not json")
    assert process.returncode == 1 and "is not JSON" in process.stderr


def test_help_is_plain_text():
    """Every --help reads as plain text: no docstring markup (backticks, roles)."""
    for command in ("", "solve", "validate", "predict", "report", "serve", "worker", "submit"):
        process = run_cli(*([command] if command else []), "--help")
        assert process.returncode == 0, process.stderr
        for markup in ("`", ":mod:", ":class:", ":func:", ":data:", "**"):
            assert markup not in process.stdout, (command, markup)


def test_help_and_a_refused_file_do_not_load_the_solver():
    """``--help``, and a spec file that cannot be read, answer without importing the
    solver's pipeline (it loads the kernels' modules and the distributed stack): the parser
    and the files' readers import only what they use."""
    probe = ("import sys\nfrom service.cli import main\n"
             "try:\n    code = main(sys.argv[1:])\nexcept SystemExit as done:\n"
             "    code = done.code\n"
             "print(sorted(m for m in sys.modules if m.startswith(('worker.pipeline', "
             "'worker.algorithms', 'worker.distributed'))))\n"
             "print(code)")
    for argv in (["--help"], ["solve", "missing.json"], ["validate", "missing.json"]):
        process = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True,
                                 text=True, timeout=120, check=False)
        loaded, code = process.stdout.strip().splitlines()[-2:]
        assert loaded == "[]", (argv, loaded)
        assert code in ("0", "1"), (argv, process.stderr)

def test_a_long_message_is_one_line_when_piped(tmp_path):
    """Piped stderr is not hard-wrapped at 80 columns: a message stays one paragraph."""
    spec = random_spec("hinge", "ordering_pairs", 0)
    spec["solver"] = {"iterations": "many", "algorithm": "simplex", "tolerance": "tight"}
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    process = run_cli("validate", str(spec_path))
    assert process.returncode == 1
    message = process.stderr.strip()
    assert "\n" not in message and len(message) > 200, message
    assert message.startswith(f"error: {spec_path}: solver.algorithm: give 'auto', "), message
    assert message.count(str(spec_path)) == 1, message
    assert "solver.iterations: give 'auto' or an integer (got 'many')" in message
