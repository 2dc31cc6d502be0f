"""What `tflaunch check` says: a table on the terminal, Markdown for a CI job's summary
(GitHub's $GITHUB_STEP_SUMMARY, GitLab's and others' Markdown reports) and JUnit XML, which
every CI shows as tests: one test case per figure, a failure where it got slower, skipped
where it could not be decided."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..grid import grid
from ..units import format_duration
from .regression import Outcome, Rule, Verdict

HEADLINES = {0: "no regression", 1: "regression", 2: "undecided"}


@dataclass(frozen=True)
class CheckResult:
    """A check's verdicts and what they were measured on, in words."""

    verdicts: Sequence[Verdict]
    code: int  # regression.exit_code
    baseline: str
    candidate: str
    rule: Rule
    conditions: Sequence[str] = field(default_factory=tuple)  # cache state, order, warm-up
    failures: Sequence[str] = field(default_factory=tuple)  # runs that failed, in words

    @property
    def headline(self) -> str:
        return HEADLINES[self.code]

    def sentence(self) -> str:
        """The outcome in one line: what got slower, or why it could not be told."""
        slower = [v for v in self.verdicts if v.outcome is Outcome.SLOWER]
        if slower:
            return "; ".join(f"{v.figure} {v.reason}" for v in slower)
        undecided = [v for v in self.verdicts if v.outcome is Outcome.UNDECIDED]
        if self.code == 2:
            return "; ".join(f"{v.figure}: {v.reason}" for v in undecided[:1])
        return "no figure got slower by the rule"


def _median(value: float | None, count: int) -> str:
    return f"{format_duration(value)} (n={count})" if value is not None else f"– (n={count})"


def _rows(result: CheckResult) -> list[list[str]]:
    return [[v.figure, _median(v.baseline_median, len(v.baseline)), _median(v.candidate_median, len(v.candidate)),
             f"{v.ratio:.2f}×" if v.ratio is not None else "–", f"{v.p:.2g}" if v.p is not None else "–",
             v.outcome.value] for v in result.verdicts]


HEADER = ["Figure", "Baseline median", "Candidate median", "Ratio", "p", "Verdict"]


def check_table(result: CheckResult) -> str:
    """The terminal's text: the table, then the outcome and why."""
    lines = [grid(HEADER, _rows(result), text=(0, 5)), ""]
    lines += [f"  {v.figure}: {v.reason}" for v in result.verdicts if v.outcome is not Outcome.SAME]
    lines += [*(f"  {failure}" for failure in result.failures)]
    lines += [f"Baseline: {result.baseline}", f"Candidate: {result.candidate}", f"Rule: {result.rule.words()}.",
              *(f"  {c}" for c in result.conditions)]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def check_markdown(result: CheckResult) -> str:
    """A CI summary: the outcome as a heading, the table, the conditions."""
    lines = [f"## tflaunch check: {result.headline}", "", _cell(result.sentence()), "",
             "| " + " | ".join(HEADER) + " |", "| --- | " + " | ".join("---:" for _ in HEADER[1:-1]) + " | --- |"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in _rows(result)]
    lines += ["", *(f"- {_cell(v.figure)}: {_cell(v.reason)}" for v in result.verdicts
                    if v.outcome is not Outcome.SAME)]
    lines += [*(f"- {_cell(f)}" for f in result.failures)]
    lines += ["", f"**Baseline:** {_cell(result.baseline)}  ", f"**Candidate:** {_cell(result.candidate)}  ",
              f"**Rule:** {_cell(result.rule.words())}.", "", "**Conditions:**", "",
              *(f"- {_cell(c)}" for c in result.conditions), ""]
    return "\n".join(lines)


def check_junit(result: CheckResult) -> str:
    """JUnit XML: a test case per figure (its time: the candidate's median)."""
    suite = ET.Element("testsuite", name="tflaunch check", tests=str(len(result.verdicts)),
                       failures=str(sum(v.outcome is Outcome.SLOWER for v in result.verdicts)),
                       skipped=str(sum(v.outcome is Outcome.UNDECIDED for v in result.verdicts)), errors="0")
    properties = ET.SubElement(suite, "properties")
    for name, value in (("baseline", result.baseline), ("candidate", result.candidate),
                        ("rule", result.rule.words()), *(("condition", c) for c in result.conditions)):
        ET.SubElement(properties, "property", name=name, value=value)
    for v in result.verdicts:
        case = ET.SubElement(suite, "testcase", classname="tflaunch.check", name=v.figure,
                             time=f"{v.candidate_median or 0.0:.6f}")
        if v.outcome is Outcome.SLOWER:
            ET.SubElement(case, "failure", message=v.reason, type="regression").text = (
                f"baseline {v.baseline}\ncandidate {v.candidate}")
        elif v.outcome is Outcome.UNDECIDED:
            ET.SubElement(case, "skipped", message=v.reason)
        ET.SubElement(case, "system-out").text = v.reason
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
