"""Head sampling as the standard variables describe it (the SDK's decisions)."""

from __future__ import annotations

import pytest

from keel.observe.sampling import Sampler

LOW_ZERO = 7 << 64  # low 64 bits 0: below any positive rate's bound
LOW_HALF = (7 << 64) | (1 << 63)  # low 64 bits 2**63: sampled only above rate 0.5


def test_the_default_samples_every_root_and_follows_the_parent() -> None:
    sampler = Sampler.from_env({})
    assert sampler == Sampler(root="always_on", rate=1.0, parent_based=True)
    assert sampler.sampled(LOW_HALF, None)
    assert not sampler.sampled(LOW_HALF, False)  # an unsampled caller is followed


def test_traceidratio_compares_the_low_64_bits_with_the_rate() -> None:
    half = Sampler.from_env(
        {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"}
    )
    assert not half.parent_based
    assert half.sampled(LOW_ZERO, None)
    assert not half.sampled(LOW_HALF, None)  # 2**63 is not below 0.5 * 2**64
    assert not half.sampled(LOW_HALF, True)  # not parent-based: the ratio decides
    assert Sampler(root="traceidratio", rate=0.51, parent_based=False).sampled(LOW_HALF, None)


def test_parentbased_traceidratio_follows_a_parent_and_rates_roots() -> None:
    env = {"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0"}
    sampler = Sampler.from_env(env)
    assert not sampler.sampled(LOW_ZERO, None)
    assert sampler.sampled(LOW_ZERO, True)
    assert not sampler.sampled(LOW_ZERO, False)
    off = Sampler.from_env({"OTEL_TRACES_SAMPLER": "parentbased_always_off"})
    assert not off.sampled(LOW_ZERO, None) and off.sampled(LOW_ZERO, True)
    assert not Sampler.from_env({"OTEL_TRACES_SAMPLER": "always_off"}).sampled(LOW_ZERO, True)


@pytest.mark.parametrize(
    "env",
    [
        {"OTEL_TRACES_SAMPLER": "jaeger_remote"},
        {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"},
        {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "often"},
    ],
)
def test_what_cannot_be_honoured_is_logged_and_samples_everything(
    env: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    sampler = Sampler.from_env(env)
    assert sampler.sampled(LOW_HALF, None)
    assert "OTEL_TRACES_SAMPLER" in caplog.text
