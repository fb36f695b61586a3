"""The serving method, derived once (runtimes/serving_method.py): the deploy's, else the producer's, else the name's."""

from __future__ import annotations

from dspark_ckpt.runtimes.serving_method import GIVEN, INFERRED, PRODUCER, serving_method

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}
SPECULATORS = {"architectures": ["Eagle3Speculator"], "speculators_model_type": "eagle3",
               "speculators_config": {"algorithm": "eagle3"}}


def test_the_deploy_s_method_comes_first() -> None:
    found = serving_method({"method": "eagle", "model": "x"}, SPECULATORS)
    assert (found.name, found.given_by, found.named) == ("eagle", GIVEN, True)


def test_a_speculators_config_names_its_own_method() -> None:
    found = serving_method({"model": "x"}, SPECULATORS)
    assert (found.name, found.given_by, found.named) == ("eagle3", PRODUCER, True)


def test_otherwise_the_name_implies_it_and_routes_nothing() -> None:
    assert serving_method(None, LLAMA) == serving_method({"method": None}, LLAMA)
    found = serving_method(None, LLAMA)
    assert (found.name, found.given_by, found.named) == ("draft_model", INFERRED, False)
    eagle3 = serving_method(None, {"architectures": ["Eagle3LlamaForCausalLM"]})
    assert (eagle3.name, eagle3.named) == ("eagle3", False)


def test_bad_values_fall_through() -> None:
    for spec in ({"method": 3}, {"method": ""}, {}):
        assert serving_method(spec, None).given_by == INFERRED
    assert serving_method(None, {"speculators_model_type": ["eagle3"], "speculators_config": {}}).given_by == INFERRED
