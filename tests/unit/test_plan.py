"""Sweeps expand exactly as declared; case ids are stable; estimates follow fio's semantics."""

from fsbench.scenario.load import load_scenario_text
from fsbench.scenario.model import Sweep
from fsbench.scenario.plan import case_id_for, plan_cases

BASE = """\
name: sweeps
settings: {repetitions: 2}
targets:
  a: {path: /srv/a, baseline: true}
  b: {path: /srv/b}
workloads:
  w:
    tool: fio
    options: {rw: randread, size: 8m, runtime: 3, time_based: true}
    sweep:
      product: {numjobs: [1, 4, 16, 64]}
  z:
    tool: fio
    targets: [b]
    repetitions: 1
    options: {rw: read, runtime: 2}
    sweep:
      product: {numjobs: [1, 2]}
      zip: {bs: [4k, 1m], iodepth: [1, 8]}
"""


def test_product_times_zip():
    sweep = Sweep(product={"numjobs": [1, 2]}, zip={"bs": ["4k", "1m"], "iodepth": [1, 8]})
    assert sweep.points() == [
        {"numjobs": 1, "bs": "4k", "iodepth": 1}, {"numjobs": 1, "bs": "1m", "iodepth": 8},
        {"numjobs": 2, "bs": "4k", "iodepth": 1}, {"numjobs": 2, "bs": "1m", "iodepth": 8},
    ]
    assert Sweep().points() == [{}]


def test_a_list_in_fio_options_is_an_error_pointing_at_sweep():
    import pytest

    from fsbench.core.errors import ScenarioError

    with pytest.raises(ScenarioError, match="a list in options is not a sweep") as err:
        load_scenario_text(BASE.replace("size: 8m,", "size: 8m, bs: [4k, 8k],"), "s.yaml")
    assert "sweep: {product: {bs: [...]}}" in err.value.issues[0].hint


def test_lists_in_options_are_never_sweeps():
    sc = load_scenario_text(BASE.replace("size: 8m", "size: 8m, percentile_list: '50:99'"), "s.yaml")
    cases = [c for c in plan_cases(sc) if c.workload == "w"]
    assert len(cases) == 2 * 4 * 2  # targets x numjobs x repetitions, nothing else


def test_plan_order_ids_and_counts():
    sc = load_scenario_text(BASE, "s.yaml")
    cases = plan_cases(sc)
    assert len(cases) == 2 * 4 * 2 + 1 * 4 * 1
    assert [c.index for c in cases] == list(range(1, len(cases) + 1))
    assert cases[0].case_id == "a__w__numjobs=1__r1" and cases[1].case_id == "a__w__numjobs=1__r2"
    assert [c.target for c in cases[:8]] == ["a"] * 8  # grouped by target so each is set up once
    z = [c for c in cases if c.workload == "z"]
    assert [(c.params["numjobs"], c.params["bs"], c.params["iodepth"]) for c in z] == [
        (1, "4k", 1), (1, "1m", 8), (2, "4k", 1), (2, "1m", 8)]
    assert z[1].options == {"rw": "read", "runtime": 2, "numjobs": 1, "bs": "1m", "iodepth": 8}
    assert len({c.case_id for c in cases}) == len(cases)
    assert [c.case_id for c in plan_cases(load_scenario_text(BASE, "s.yaml"))] == [c.case_id for c in cases]


def test_estimates_use_runtime_and_timeouts_leave_room():
    sc = load_scenario_text(BASE, "s.yaml")
    first, later = [c for c in plan_cases(sc) if c.workload == "w"][:2]
    # time_based runtime + start-up, plus the untimed prepare step: laying out the dataset once, for the
    # sweep's most clones (64 x 8 MiB, the files of every later case), then a check
    assert first.estimate_s == round(3 + 1 + 64 * 8 / 400 + 0.2, 1) and later.estimate_s == 3 + 1 + 0.2
    assert first.timeout_s >= 120


def test_after_a_writer_the_first_read_counts_what_it_adds_to_the_files():
    sc = load_scenario_text("""\
        name: wr
        targets: {t: {path: /srv/t}}
        workloads:
          write: {tool: fio, dataset: d, overwrite: true, options: {rw: write, size: 100m}}
          read:
            tool: fio
            dataset: d
            options: {rw: read, size: 100m, runtime: 3, time_based: true}
            sweep: {product: {numjobs: [1, 4]}}
        """.replace("        ", ""), "s.yaml")
    write, first, later = plan_cases(sc)
    # the writer left one clone's file; the first read lays out the three more the 4-clone case reads
    assert first.estimate_s == round(3 + 1 + 3 * 100 / 400 + 0.2, 1) and later.estimate_s == 3 + 1 + 0.2


def test_long_ids_are_shortened_but_unique():
    a = case_id_for("t", "w", {"filename_format": "x" * 200}, 1)
    b = case_id_for("t", "w", {"filename_format": "x" * 199 + "y"}, 1)
    assert len(a) <= 120 and a != b
    assert "/" not in case_id_for("t", "w", {"bs": "4k/8k"}, 1)


def test_shipped_job_file_plans_as_two_stonewalled_sections(tmp_path):
    from tests.paths import REPO

    f = tmp_path / "s.yaml"
    f.write_text(f"name: jf\ntargets: {{t: {{path: /srv/t}}}}\nworkloads:\n  w:\n    tool: fio\n"
                 f"    job_file: {REPO / 'configs/fio/write-then-randread.fio'}\n    options: {{runtime: 4, time_based: true}}\n")
    from fsbench.scenario.load import load_scenario

    (case,) = plan_cases(load_scenario(f))
    # two groups of at most 4 s each, plus start-up, plus laying out the read section's 64 MiB before the
    # (untimed) read: the write section writes new files in the measured run, its folder emptied first
    assert case.estimate_s == round(4 + 4 + 1 + 64 / 400 + 0.2, 1)
    assert case.prepare and case.dataset == "w" and case.drop_caches and case.fresh


def test_case_timeouts_leave_room_for_what_fio_is_told_to_run(tmp_path):
    """An hour-long job (runtime's alias timeout, with a comment) gets more than an hour, not 120 s; a job
    fio lets run at its rate_min gets that long."""
    from fsbench.scenario.load import load_scenario

    (tmp_path / "hour.fio").write_text("[global]\nsize=64m\ntimeout=3600 # one hour\ntime_based\n[r]\nrw=read\n")
    (tmp_path / "slow.fio").write_text("[global]\nrw=write\nsize=1g\nrate_min=1m\n[w]\n")
    f = tmp_path / "s.yaml"
    f.write_text("name: t\ntargets: {t: {path: /srv/t}}\nworkloads:\n  hour: {tool: fio, job_file: hour.fio}\n"
                 "  slow: {tool: fio, job_file: slow.fio}\n")
    hour, slow = plan_cases(load_scenario(f))
    assert hour.estimate_s > 3600 and hour.timeout_s >= 3 * 3600
    assert slow.estimate_s < 5 and slow.timeout_s >= 1024 + 60


def test_plan_show_lists_the_rbd_image_fill_of_the_job_file_s_extent(tmp_path):
    from fsbench.run.plan_show import describe_case
    from fsbench.scenario.load import load_scenario

    (tmp_path / "r.fio").write_text("[global]\nrw=randread\nbs=4k\nsize=64m\n[j]\n")
    f = tmp_path / "s.yaml"
    f.write_text("name: t\ntargets:\n  img: {kind: rbd-image, path: /fsbench-img, rbd-image: {pool: rbd, image: im}}\n"
                 "workloads:\n  w: {tool: fio, job_file: r.fio}\n")
    sc = load_scenario(f)
    (case,) = plan_cases(sc)
    shown = describe_case(sc, case)
    fill = shown[shown.index("-- prepare"):shown.index("-- run")]
    assert "once per target: a later case that writes the same skips it" in fill
    assert "| size=64m" in fill and "| rw=write" in fill and "| rbdname=im" in fill


def test_plan_show_gives_a_numjobs_sweep_s_first_case_the_layout_of_its_most_clones():
    from fsbench.run.plan_show import describe_case

    sc = load_scenario_text("""\
name: c
targets: {a: {path: /srv/a}, b: {path: /srv/b}}
workloads:
  r: {tool: fio, options: {rw: randread, size: 8m, runtime: 1, time_based: true}, sweep: {product: {numjobs: [1, 2, 4]}}}
""", "c.yaml")
    cases = plan_cases(sc)
    shown = {c.case_id: describe_case(sc, c, tuple(cases)) for c in cases}
    for target in ("a", "b"):  # each target's dataset is its own
        first = shown[f"{target}__r__numjobs=1__r1"]
        prepare = first[first.index("-- prepare"):first.index("-- drop")]
        assert "and the dataset's later cases' files" in prepare and "| numjobs=4" in prepare
        assert f"(the step of {target}__r__numjobs=4__r1, which holds them all)" in prepare
        assert f"   {target}__r__numjobs=2__r1\n" in prepare
        later = shown[f"{target}__r__numjobs=2__r1"]
        assert "later cases' files" not in later and "| numjobs=2" in later
    # without the plan's other cases the first case shows its own step, as before
    alone = describe_case(sc, cases[0])
    assert "later cases' files" not in alone and "| numjobs=1" in alone[alone.index("-- prepare"):]


def test_plan_show_names_the_client_cache_step_where_a_case_empties_it():
    from fsbench.run.plan_show import describe_case

    sc = load_scenario_text("""\
name: c
targets:
  s3: {kind: fuse, path: /srv/bench/s3, client_process: goofys, fuse: {mount: "goofys b ${target.path}"}}
  d: {path: /srv/bench/d}
workloads:
  r: {tool: fio, options: {rw: read, size: 1m}, drop_client_cache: true}
""", "c.yaml")
    shown = {c.target: describe_case(sc, c) for c in plan_cases(sc)}
    assert "-- empty s3's client cache folders that lie in the run's scratch space" in shown["s3"]
    assert "client cache" not in shown["d"]  # a plain folder has no client


def test_rounds_order_runs_repetition_one_of_every_target_before_repetition_two(tmp_path):
    """settings.order: rounds: workload, sweep point, repetition, then target; each target's own order kept."""
    from fsbench.scenario import load_scenario, plan_cases

    path = tmp_path / "s.yaml"
    path.write_text(f"""\
name: r
settings: {{order: rounds, shuffle: false, repetitions: 2, scratch: {tmp_path}/s}}
targets:
  a: {{path: {tmp_path}/a}}
  b: {{path: {tmp_path}/b}}
workloads:
  w: {{tool: fio, options: {{rw: write, bs: 4k, size: 1m}}, sweep: {{product: {{numjobs: [1, 2]}}}}}}
""")
    cases = plan_cases(load_scenario(path, [], None))
    assert [(c.params["numjobs"], c.repetition, c.target) for c in cases] == [
        (1, 1, "a"), (1, 1, "b"), (1, 2, "a"), (1, 2, "b"), (2, 1, "a"), (2, 1, "b"), (2, 2, "a"), (2, 2, "b")]
    assert [c.index for c in cases] == list(range(1, 9))


def test_rounds_shuffle_gives_each_round_its_own_target_order_the_same_on_every_plan(tmp_path):
    """settings.shuffle (the default with rounds): every round holds every target once, rounds still run in
    turn, the order is the same on every plan of the scenario, and no target holds one place in every round."""
    from fsbench.scenario import load_scenario, plan_cases

    path = tmp_path / "s.yaml"
    lines = ["name: shuffled", f"settings: {{order: rounds, repetitions: 3, scratch: {tmp_path}/s}}", "targets:"]
    lines += [f"  t{i}: {{path: {tmp_path}/t{i}}}" for i in range(6)]
    lines += ["workloads:", "  w: {tool: fio, options: {rw: write, bs: 4k, size: 1m}}",
              "  v: {tool: fio, options: {rw: read, bs: 4k, size: 1m}}"]
    path.write_text("\n".join(lines) + "\n")
    cases = plan_cases(load_scenario(path, [], None))
    again = plan_cases(load_scenario(path, [], None))
    assert [c.case_id for c in cases] == [c.case_id for c in again]
    blocks = [cases[i:i + 6] for i in range(0, len(cases), 6)]
    assert [(b[0].workload, b[0].repetition) for b in blocks] == [("w", 1), ("w", 2), ("w", 3), ("v", 1), ("v", 2),
                                                                  ("v", 3)]
    assert all(sorted(c.target for c in b) == [f"t{i}" for i in range(6)] for b in blocks)
    assert all({c.workload for c in b} == {b[0].workload} and {c.repetition for c in b} == {b[0].repetition}
               for b in blocks)
    orders = [[c.target for c in b] for b in blocks]
    assert len({tuple(o) for o in orders}) > 1
    for t in (f"t{i}" for i in range(6)):  # no target in one place of every round of a workload
        assert len({o.index(t) for o in orders[:3]}) > 1 or len({o.index(t) for o in orders[3:]}) > 1
    assert [c.index for c in cases] == list(range(1, len(cases) + 1))


def test_fresh_rounds_run_every_workload_of_a_round_before_the_next_and_say_so(tmp_path):
    """settings.fresh: a round is every workload on targets set up for it, so the repetition comes first; the
    second round's read lays its files out again (the first round's went with its target)."""
    from fsbench.scenario import load_scenario, plan_cases
    from fsbench.scenario.plan import order_text

    path = tmp_path / "s.yaml"
    path.write_text(f"""\
name: r
settings: {{order: rounds, fresh: targets, shuffle: false, repetitions: 2, scratch: {tmp_path}/s}}
targets:
  a: {{path: {tmp_path}/a}}
  b: {{path: {tmp_path}/b}}
workloads:
  w: {{tool: fio, options: {{rw: write, bs: 4k, size: 1m}}}}
  r: {{tool: fio, options: {{rw: read, bs: 4k, size: 64m}}}}
""")
    sc = load_scenario(path, [], None)
    cases = plan_cases(sc)
    assert [(c.repetition, c.workload, c.target) for c in cases] == [
        (1, "w", "a"), (1, "w", "b"), (1, "r", "a"), (1, "r", "b"),
        (2, "w", "a"), (2, "w", "b"), (2, "r", "a"), (2, "r", "b")]
    reads = {(c.target, c.repetition): c.estimate_s for c in cases if c.workload == "r"}
    assert reads[("a", 2)] == reads[("a", 1)] > 0  # the layout counted in every round, not only the first
    assert "in fresh rounds" in order_text(sc) and "torn down after them" in order_text(sc)
    assert "services started anew" not in order_text(sc)
    path.write_text(path.read_text().replace("fresh: targets", "fresh: services"))
    assert order_text(load_scenario(path, [], None)).endswith("torn down after them, its services started anew too")
    path.write_text(path.read_text().replace("fresh: services", "fresh: none"))
    stale = load_scenario(path, [], None)
    later = {(c.target, c.repetition): c.estimate_s for c in plan_cases(stale) if c.workload == "r"}
    assert later[("a", 2)] < later[("a", 1)]
