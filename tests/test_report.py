"""Reports: Markdown table, README block round trip, JSON, and the offline HTML index."""

import re
import shutil

import pytest

from icml26.claims import Scale, run_claims
from icml26.registry import SYSTEMS
from icml26.report import (
    README_BEGIN,
    README_END,
    format_number,
    format_values,
    load_system_report,
    markdown_table,
    readme_verdicts,
    update_readme,
    write_index,
    write_system_report,
)


@pytest.fixture(scope="module")
def summaries():
    from fakesys.claims import CLAIMS

    return run_claims(CLAIMS, Scale.SMOKE, seeds=3, with_control=True)


def test_number_formatting():
    assert format_number(0.123456) == "0.123"
    assert format_number(123456.0) == "1.23e+05"
    assert format_number(0.0) == "0"
    assert format_number(float("nan")) == "nan"
    assert format_values({"a": 1.0, "b": 2.0}, {"a": 0.5, "b": 0.0}) == "a: 1 ± 0.5; b: 2"
    assert format_values({}) == "–"


def test_markdown_table_has_one_row_per_claim_and_reasons(summaries):
    table = markdown_table(summaries)
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) == 4
    assert "**holds**" in rows[0] and "**fails**" in rows[1] and "**not-measured**" in rows[2]
    assert "| **fails**: the estimator is shifted by one standard deviation" in rows[0]  # the control's column
    assert "not from the paper: abs error at n = 400 [a textbook]: 0.04" in rows[0]
    assert "95% CI of MSE(median) - MSE(mean): [" in rows[3]
    assert "- `fakesys/needs-cluster-v2` (not-measured): needs a cluster" in table
    assert "Scale `smoke`" in table


def test_readme_block_round_trip(tmp_path, summaries):
    readme = tmp_path / "README.md"
    shutil.copy("tests/fakesys/README.md", readme)
    update_readme(readme, summaries)
    assert readme_verdicts(readme) == ["holds", "fails", "not-measured", "holds"]
    update_readme(readme, summaries[:1])  # a second update replaces, never appends
    assert readme_verdicts(readme) == ["holds"]
    assert readme.read_text().count(README_BEGIN) == 1
    assert readme.read_text().endswith("There is no paper.\n")


def test_readme_without_markers_is_refused_with_the_lines_to_add(tmp_path, summaries):
    readme = tmp_path / "README.md"
    readme.write_text("# x\n")
    with pytest.raises(ValueError, match="no claims block"):
        update_readme(readme, summaries)
    assert readme_verdicts(readme) is None and readme_verdicts(tmp_path / "missing.md") is None


def test_json_report_round_trip(tmp_path, summaries, fake_spec):
    folder = write_system_report(fake_spec, summaries, tmp_path)
    assert (folder / "claims.md").read_text().startswith("# fakesys: On the Sample Mean")
    loaded = load_system_report(tmp_path, "fakesys")
    assert [s.to_dict() for s in loaded] == [s.to_dict() for s in summaries]
    assert load_system_report(tmp_path, "nosuch") is None


def test_index_lists_every_system_renders_offline_and_escapes(tmp_path, summaries, fake_spec):
    import dataclasses

    from fakesys.claims import MECHANISMS
    from icml26.claims import run_mechanisms

    summaries = [dataclasses.replace(summaries[0], statement="x < y & <script>"), *summaries[1:]]
    probes = list(run_mechanisms(MECHANISMS, Scale.SMOKE).values())
    write_system_report(fake_spec, summaries, tmp_path, probes=probes)
    specs = [*SYSTEMS.values(), fake_spec]
    page = write_index(tmp_path, specs).read_text()
    for spec in SYSTEMS.values():
        assert f'id="{spec.id}"' in page
    assert page.count("Planned: not implemented yet.") == sum(not s.implemented for s in SYSTEMS.values())
    # the tally: 2 hold, 1 fails (its positive control held), 0 no-power, 1 not measured, 0 other; 4/4 negative
    # controls did their job, 3/3 positive controls of measurable claims held, the one mechanism was live
    cells = "".join(f'<td class="num">{n}</td>' for n in (2, 1, 0, 1, 0, "4/4", "3/4", "1/1"))
    assert cells in page
    assert page.count('negative: <span class="holds">fails</span>') == 3  # a failing control is the good outcome
    assert page.count('positive: <span class="holds">holds</span>') == 3
    assert '<span class="fails">fails</span>' in page
    # offline: no external scripts, stylesheets, fonts or images
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "<script" not in page and "<link" not in page
    assert "x &lt; y &amp; &lt;script&gt;" in page  # text is escaped, never raw HTML


def test_a_holding_claim_is_green_only_when_its_control_failed(summaries):
    import dataclasses

    from icml26.report import markdown_row, status_class

    held = summaries[0]
    assert held.status == "holds" and status_class(held.status) == "holds"
    unchecked = dataclasses.replace(held, control=None)
    assert unchecked.status == "holds; control not run" and status_class(unchecked.status) == "unchecked"
    leaky = dataclasses.replace(held, control=dataclasses.replace(held.control, verdict="holds"))
    assert leaky.status == "holds; control holds too" and status_class(leaky.status) == "cannot-fail"
    built = dataclasses.replace(held, by_construction="the data were built so")
    assert built.status == "holds by construction"
    assert "**holds by construction**" in markdown_row(built)
    table = markdown_table([built, leaky])
    assert "(holds by construction): the data were built so" in table
    assert "held too: the claim cannot fail" in table
    # none of these counts as holding in the README
    assert [c for c in (unchecked, leaky, built) if c.status == "holds"] == []


def test_readme_verdicts_find_the_verdict_column_by_its_header(tmp_path):
    readme = tmp_path / "README.md"
    header = "| claim | paper | measured (mean ± sd) | baselines | verdict | seeds |\n|---|---|---|---|---|---|\n"
    readme.write_text(f"{README_BEGIN}\n{header}| `x/a-v1` s | p | m | b | **holds** | 3 |\n<!-- claims:end -->\n")
    # a table from before negative controls: its "holds" was never checked by a control, so it does not count
    assert readme_verdicts(readme) == ["holds; control not run"]


def test_a_readme_table_from_before_positive_controls_counts_its_fails_as_unchecked(tmp_path):
    from icml26.report import count_outcomes

    readme = tmp_path / "README.md"
    header = "| claim | verdict | negative control | seeds |\n|---|---|---|---|\n"
    rows = "| `x/a-v1` s | **fails** | **fails**: c | 3 |\n| `x/b-v1` s | **holds** | **fails**: c | 3 |\n"
    readme.write_text(f"{README_BEGIN}\n{header}{rows}<!-- claims:end -->\n")
    verdicts = readme_verdicts(readme)
    assert verdicts == ["fails; no positive control", "holds"]
    assert count_outcomes(verdicts) == {"holds": 1, "fails": 0, "no-power": 0, "not-measured": 0, "other": 1}


def test_the_mechanisms_block_keeps_other_scales_and_updates_this_one(tmp_path, summaries):
    import dataclasses

    from fakesys.claims import MECHANISMS
    from icml26.claims import run_mechanisms

    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{README_BEGIN}\n{README_END}\n\n## Benchmark\n")
    smoke = list(run_mechanisms(MECHANISMS, Scale.SMOKE).values())
    update_readme(readme, summaries, probes=smoke, mechanisms=MECHANISMS)
    small = [dataclasses.replace(smoke[0], scale="small", mean=0.5, std=0.1, live=False, values=[0.4, 0.5, 0.6])]
    small_summaries = [dataclasses.replace(s, scale="small") for s in summaries]
    update_readme(readme, small_summaries, probes=small, mechanisms=MECHANISMS)
    text = readme.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `averaging`"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[4].endswith("(live, 1 seeds)") and cells[5] == "0.5 ± 0.1 (**inert**, 3 seeds)" and cells[6] == "–"
    assert text.count("mechanisms:begin") == 1 and text.index("mechanisms:begin") < text.index("## Benchmark")


def test_a_claim_held_by_construction_keeps_its_reason_beside_an_inert_mechanism(summaries):
    import dataclasses

    inert = {"name": "gates", "measures": "channels removed", "mean": 0.0, "rule": "live when > 0.05", "live": False}
    built = dataclasses.replace(summaries[0], by_construction="the data were built so", probes=[inert])
    assert built.status == "holds by construction"
    table = markdown_table([built])
    assert "the data were built so; also mechanism gates inert (channels removed = 0" in table


def test_readme_scale_is_read_back_for_the_list(tmp_path, summaries):
    from icml26.report import readme_scale

    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{README_BEGIN}\n{README_END}\n")
    assert readme_scale(readme) is None
    update_readme(readme, summaries)
    assert readme_scale(readme) == "smoke" and readme_scale(tmp_path / "missing.md") is None
