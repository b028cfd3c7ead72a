"""drawb.api._go.go_duration writes a duration as Go's time.Duration.String does."""

from __future__ import annotations

import pytest

from drawb.api._go import go_duration


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (0.000000001, "1ns"), (0.0000015, "1.5µs"), (0.313, "313ms"), (0.5, "500ms"),
    (1, "1s"), (1.594, "1.594s"), (12.5, "12.5s"), (60, "1m0s"), (61.25, "1m1.25s"),
    (3600, "1h0m0s"), (3723.5, "1h2m3.5s"), (-0.25, "-250ms"),
])
def test_durations_read_as_go_prints_them(seconds, text):
    assert go_duration(seconds) == text
