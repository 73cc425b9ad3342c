"""The fault regime's end-of-run summary is printed by ``tests/conftest.py`` from
:mod:`tests.faults.tally`, summed over every test process (a pytest-xdist controller collects no
test, so it never loads this folder's conftest)."""
