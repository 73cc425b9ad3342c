"""Fork server for the journal repair's crash suite: ``python -m tests.faults._repair_zygote``.

The fault regime's fork server (:mod:`tests.faults._zygote`, same requests and replies) with the
repair scenarios of :mod:`tests.faults.repair_scenarios` added to its scenario table, in this
process only (the other suites iterate the table and check the reconciler's invariants).
"""

from __future__ import annotations

from tests.faults import _zygote, scenarios
from tests.faults.repair_scenarios import REPAIR_SCENARIOS

scenarios.SCENARIOS.update(REPAIR_SCENARIOS)

if __name__ == "__main__":
    _zygote.main()
