"""The second floating-point path of .ci/run switches every kernel layer (tests/fp_paths.py)."""

from fp_paths import LAYERS, differing_layers, digest, second_path_environment
from numpy._core._multiarray_umath import __cpu_dispatch__


def test_the_second_path_switches_every_layer_below_the_first():
    env = second_path_environment("Haswell")
    assert env["NPY_DISABLE_CPU_FEATURES"].split() == list(__cpu_dispatch__)
    assert env["OPENBLAS_CORETYPE"] == "Prescott"
    assert env["ATEN_CPU_CAPABILITY"] == "default" and env["MKL_CBWR"] == "COMPATIBLE"


def test_a_first_path_already_on_the_lowest_openblas_core_gets_another():
    assert second_path_environment("Katmai")["OPENBLAS_CORETYPE"] == "Nehalem"
    assert second_path_environment("PRESCOTT")["OPENBLAS_CORETYPE"] == "Nehalem"


def test_compare_names_each_layer_whose_planted_value_did_not_change():
    first = {"planted": dict.fromkeys(LAYERS, "a")}
    second = {"planted": {**dict.fromkeys(LAYERS, "b"), "aten": "a"}}
    assert differing_layers(first, second) == ["numpy", "openblas", "mkl"]
    assert differing_layers(first, first) == []


def test_the_digest_sees_the_last_bit():
    assert digest(1.0) != digest(float.fromhex("0x1.0000000000001p+0"))
