"""What one open in a mutation suite (sealed_mutations.py, age_mutations.py)
can come to. The first three are fine; PROBLEMS make a run fail."""

from __future__ import annotations

import re

TRIED = "tried"
REJECTED = "rejected"
ACCEPTED_CORRECTLY = "accepted correctly"
WRONGLY_ACCEPTED = "wrongly accepted"
WRONGLY_REJECTED = "wrongly rejected"
CRASHED = "crashed"
HUNG = "hung"
LEFT_BEHIND = "left behind"
ERROR_NOT_ONE_LINE = "error not one line"
PROBLEMS = (WRONGLY_ACCEPTED, WRONGLY_REJECTED, CRASHED, HUNG, LEFT_BEHIND, ERROR_NOT_ONE_LINE)
COLUMNS = (TRIED, REJECTED, ACCEPTED_CORRECTLY, *PROBLEMS)

# A sanitizer's report on stderr: a crash even where the exit status hides it.
SANITIZER_REPORT = re.compile(rb"(Address|Leak|Memory|Thread|UndefinedBehavior)Sanitizer|runtime error:")
