"""The serve command's process set-up."""

from __future__ import annotations

import gc

from parlour.cli import GC_THRESHOLDS, _tune_gc


def test_the_server_collects_garbage_less_often_and_freezes_its_start_up_objects() -> None:
    before = gc.get_threshold()
    try:
        _tune_gc()
        assert gc.get_threshold() == GC_THRESHOLDS
        assert GC_THRESHOLDS[0] > before[0]
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
