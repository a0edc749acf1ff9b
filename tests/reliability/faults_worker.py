"""Entry module for fault tests' Dramatiq workers: `lookout.worker`, with shorter leases.

`dramatiq tests.reliability.faults_worker` is `lookout worker` except that the chat lease
(chat.lease.LEASE_S, 60 s) and the run lease (watches.runner.RUN_LEASE_S, 90 s) may be shortened
through LOOKOUT_FAULTS_CHAT_LEASE_S and LOOKOUT_FAULTS_RUN_LEASE_S, so that a test sees a killed
worker's chat freed and its run swept in seconds instead of minutes. Both are module constants
read at call time; the ratio (run lease > chat lease) is what the tests keep.
"""

from __future__ import annotations

import os

from lookout.chat import lease
from lookout.watches import runner

if "LOOKOUT_FAULTS_CHAT_LEASE_S" in os.environ:
    lease.LEASE_S = float(os.environ["LOOKOUT_FAULTS_CHAT_LEASE_S"])
if "LOOKOUT_FAULTS_RUN_LEASE_S" in os.environ:
    runner.RUN_LEASE_S = float(os.environ["LOOKOUT_FAULTS_RUN_LEASE_S"])

from lookout import worker  # sets the broker and declares the actors

__all__ = ["worker"]
