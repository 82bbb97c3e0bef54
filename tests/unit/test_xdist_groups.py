"""The suite's work units for xdist: lab modules together, heaviest first, each unit's order kept."""

from __future__ import annotations

from tests.xdist_groups import heaviest_first, unit_of


def test_lab_modules_are_one_unit_and_other_modules_their_own():
    assert unit_of("tests/e2e/test_ceph.py::test_a") == unit_of("tests/e2e/test_multihost_ceph.py::t[x]") == "e2e:ceph-lab"
    assert unit_of("tests/e2e/test_quickstart.py::test_q") == "e2e:test_quickstart"
    assert unit_of("tests/unit/test_stats.py::test_t[a::b]") == "tests/unit/test_stats.py"


def test_the_heaviest_units_go_first_and_each_keeps_its_order():
    ids = ["tests/unit/test_a.py::one", "tests/e2e/test_quickstart.py::q1", "tests/e2e/test_ceph.py::c1",
           "tests/e2e/test_multihost_ceph.py::m1", "tests/e2e/test_quickstart.py::q2", "tests/e2e/test_ceph.py::c2"]
    assert heaviest_first(ids) == ["tests/e2e/test_ceph.py::c1", "tests/e2e/test_multihost_ceph.py::m1",
                                   "tests/e2e/test_ceph.py::c2", "tests/e2e/test_quickstart.py::q1",
                                   "tests/e2e/test_quickstart.py::q2", "tests/unit/test_a.py::one"]
